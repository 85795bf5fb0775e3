//! `CallContext`: what a handler gets besides its arguments.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolwire::{Context, RequestOptions};

use crate::errors::{ToolwireError, invalid_json};
use crate::runtime::on_runtime;

/// The context of one tool call: progress, logging, cancellation, the client's identity, and
/// requests back to the client (sampling, elicitation, roots).
#[derive(uniffi::Object)]
pub struct CallContext {
    context: Context,
}

impl CallContext {
    pub(crate) fn new(context: Context) -> Arc<Self> {
        Arc::new(CallContext { context })
    }
}

/// Severity of a log message, least severe first (the syslog levels MCP uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl From<LogLevel> for toolwire::LogLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => toolwire::LogLevel::Debug,
            LogLevel::Info => toolwire::LogLevel::Info,
            LogLevel::Notice => toolwire::LogLevel::Notice,
            LogLevel::Warning => toolwire::LogLevel::Warning,
            LogLevel::Error => toolwire::LogLevel::Error,
            LogLevel::Critical => toolwire::LogLevel::Critical,
            LogLevel::Alert => toolwire::LogLevel::Alert,
            LogLevel::Emergency => toolwire::LogLevel::Emergency,
        }
    }
}

/// The client's `clientInfo` from `initialize`.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ClientInfo {
    /// Program name.
    pub name: String,
    /// Program version.
    pub version: String,
    /// Display name.
    pub title: Option<String>,
}

#[uniffi::export]
impl CallContext {
    /// The id of the `tools/call` request as JSON text (`7`, or `"abc"` with its quotes).
    pub fn request_id(&self) -> String {
        self.context.request_id().to_json().to_string()
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> String {
        self.context.tool_name().to_owned()
    }

    /// The negotiated protocol version, e.g. `2025-11-25`.
    pub fn protocol_version(&self) -> String {
        self.context.protocol_version().as_str().to_owned()
    }

    /// The client's name and version.
    pub fn client_info(&self) -> Option<ClientInfo> {
        self.context.client_info().map(|info| ClientInfo {
            name: info.name.clone(),
            version: info.version.clone(),
            title: info.title.clone(),
        })
    }

    /// The capabilities the client declared, as JSON text (`null` before `initialize`).
    pub fn client_capabilities_json(&self) -> String {
        self.context.client_capabilities().to_string()
    }

    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.context.wants_progress()
    }

    /// Reports progress; sent only if the client asked for it and `progress` grew. Returns
    /// whether it was sent.
    #[uniffi::method(default(total = None, message = None))]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.context.progress(progress, total, message.as_deref())
    }

    /// Sends a log message to the client if `level` is at or above the level it set. Returns
    /// whether it was sent.
    #[uniffi::method(default(logger = None))]
    pub fn log(&self, level: LogLevel, message: String, logger: Option<String>) -> bool {
        self.context
            .log_as(level.into(), logger.as_deref(), Value::String(message))
    }

    /// [`log`](Self::log) with structured data (JSON text) instead of a message.
    #[uniffi::method(default(logger = None))]
    pub fn log_json(
        &self,
        level: LogLevel,
        data_json: String,
        logger: Option<String>,
    ) -> Result<bool, ToolwireError> {
        let data: Value =
            serde_json::from_str(&data_json).map_err(|err| invalid_json("the log data", err))?;
        Ok(self.context.log_as(level.into(), logger.as_deref(), data))
    }

    /// Over Streamable HTTP with an SSE answer: closes the connection carrying this call
    /// (after a retry hint) without ending it; the client reconnects and resumes. No effect on
    /// stdio.
    pub fn close_sse_stream(&self) {
        self.context.close_sse_stream();
    }

    /// Whether the call was cancelled (by the client, its deadline, or shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.context.is_cancelled()
    }

    /// Returns when the call is cancelled.
    pub async fn cancelled(&self) {
        self.context.cancellation_token().cancelled_owned().await;
    }

    /// Asks the client's model for a completion (`sampling/createMessage`); `params_json` and
    /// the answer are JSON text as in the spec.
    pub async fn sample(&self, params_json: String) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        answer(
            on_runtime(async move { context.sample(params, RequestOptions::default()).await })
                .await?,
        )
    }

    /// Asks the user for input (`elicitation/create`); JSON text in and out.
    pub async fn elicit(&self, params_json: String) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        answer(
            on_runtime(async move { context.elicit(params, RequestOptions::default()).await })
                .await?,
        )
    }

    /// The client's roots (`roots/list`), as JSON text of the result.
    pub async fn list_roots(&self) -> Result<String, ToolwireError> {
        let context = self.context.clone();
        answer(
            on_runtime(async move {
                context
                    .list_roots(RequestOptions::default())
                    .await
                    .map(|roots| serde_json::json!(roots))
            })
            .await?,
        )
    }

    /// Sends any request to the client and returns its result as JSON text. `timeout_ms`
    /// bounds the wait (counted again from each progress notification); default: the server's.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn request(
        &self,
        method: String,
        params_json: String,
        timeout_ms: Option<u64>,
    ) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        let mut options = RequestOptions::default();
        options.timeout = timeout_ms.map(Duration::from_millis);
        answer(on_runtime(async move { context.request(&method, params, options).await }).await?)
    }
}

fn parse_params(json: &str) -> Result<Value, ToolwireError> {
    serde_json::from_str(json).map_err(|err| invalid_json("the request's params", err))
}

fn answer(outcome: Result<Value, toolwire::Error>) -> Result<String, ToolwireError> {
    outcome.map(|value| value.to_string()).map_err(Into::into)
}
