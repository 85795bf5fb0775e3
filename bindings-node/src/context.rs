//! `NativeContext`: a tool call's context, for the JS `Context` wrapper.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use napi_derive::napi;
use serde_json::Value;
use toolwire::{CancellationToken, Context, LogLevel, RequestId, RequestOptions};

use crate::errors;

/// How a call ended, for its `AbortSignal`.
#[derive(Default)]
pub(crate) struct CallSignals {
    /// Why the call was abandoned, if it was: `"cancelled"` or `"deadline"`.
    reason: OnceLock<&'static str>,
    ended: CancellationToken,
}

impl CallSignals {
    pub(crate) fn abort(&self, reason: &'static str) {
        let _ = self.reason.set(reason);
    }

    pub(crate) fn end(&self) {
        self.ended.cancel();
    }
}

#[napi]
pub struct NativeContext {
    ctx: Context,
    signals: Arc<CallSignals>,
}

impl NativeContext {
    pub(crate) fn new(ctx: Context, signals: Arc<CallSignals>) -> Self {
        NativeContext { ctx, signals }
    }
}

#[napi]
impl NativeContext {
    /// Reports progress; returns whether it was sent.
    #[napi]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.ctx.progress(progress, total, message.as_deref())
    }

    /// Sends a log message if `level` passes the client's level; returns whether it was sent.
    #[napi]
    pub fn log(&self, level: String, data: Value, logger: Option<String>) -> napi::Result<bool> {
        let level = LogLevel::parse(&level).ok_or_else(|| {
            napi::Error::new(
                napi::Status::InvalidArg,
                format!("unknown log level {level:?}"),
            )
        })?;
        Ok(self.ctx.log_as(level, logger.as_deref(), data))
    }

    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.ctx.is_cancelled() || self.signals.reason.get().is_some()
    }

    #[napi(getter)]
    pub fn request_id(&self) -> Value {
        match self.ctx.request_id() {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_ref()),
        }
    }

    #[napi(getter)]
    pub fn tool_name(&self) -> String {
        self.ctx.tool_name().to_owned()
    }

    #[napi(getter)]
    pub fn protocol_version(&self) -> String {
        self.ctx.protocol_version().as_str().to_owned()
    }

    #[napi(getter)]
    pub fn client_info(&self) -> Value {
        self.ctx
            .client_info()
            .and_then(|info| serde_json::to_value(info).ok())
            .unwrap_or(Value::Null)
    }

    #[napi(getter)]
    pub fn client_capabilities(&self) -> Value {
        self.ctx.client_capabilities().clone()
    }

    /// `sampling/createMessage`, `elicitation/create` or `roots/list` (by `kind`: "sample",
    /// "elicit", "roots") or any other `kind` as a method name; resolves to `{ ok }` or
    /// `{ error }`.
    #[napi]
    pub async fn client_request(
        &self,
        kind: String,
        params: Value,
        timeout_ms: Option<u32>,
    ) -> Value {
        let ctx = self.ctx.clone();
        let options = match timeout_ms {
            Some(ms) => RequestOptions::with_timeout(Duration::from_millis(u64::from(ms))),
            None => RequestOptions::default(),
        };
        let work = async move {
            match kind.as_str() {
                "sample" => ctx.sample(params).await,
                "elicit" => ctx.elicit(params).await,
                "roots" => ctx.list_roots().await,
                method => ctx.request(method, params, options).await,
            }
        };
        // The back-channel's timers live on the engine's runtime.
        match crate::runtime::runtime().spawn(work).await {
            Ok(result) => errors::outcome(result),
            Err(join) => serde_json::json!({ "error": errors::invalid_argument(join.to_string()) }),
        }
    }

    /// Resolves when the call ends: to `"cancelled"` or `"deadline"` if it was abandoned,
    /// otherwise to `null`.
    #[napi]
    pub async fn ended(&self) -> Option<String> {
        let signals = self.signals.clone();
        signals.ended.cancelled().await;
        signals.reason.get().map(|reason| (*reason).to_owned())
    }
}
