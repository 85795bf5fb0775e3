//! Tool calls' contexts, for the JS `Context` wrapper: JavaScript holds a call's number, and
//! the functions here act on the call with that number (a number costs nothing to hand over;
//! a wrapped native object per call costs a finalizer).
//!
//! A call's entry lives while the call runs; afterwards its number finds nothing, and the
//! context reads as cancelled (the call is over: whatever still runs should stop).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
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

struct CallEntry {
    ctx: Context,
    signals: Arc<CallSignals>,
    /// Where the handler's result goes when it settles later (it returned a Promise).
    settle: Option<tokio::sync::oneshot::Sender<String>>,
}

#[derive(Default)]
struct Calls {
    entries: HashMap<u32, CallEntry>,
    next: u32,
}

fn calls() -> std::sync::MutexGuard<'static, Calls> {
    static CALLS: OnceLock<Mutex<Calls>> = OnceLock::new();
    CALLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// A running call's entry; dropping it ends the call for JavaScript, and fires the signal
/// unless the call [finished](Self::finish).
pub(crate) struct CallHandle {
    id: u32,
    signals: Arc<CallSignals>,
    finished: bool,
}

impl CallHandle {
    /// Registers a running call.
    pub(crate) fn register(ctx: Context) -> CallHandle {
        let signals = Arc::new(CallSignals::default());
        let mut calls = calls();
        let mut id = calls.next;
        while calls.entries.contains_key(&id) {
            id = id.wrapping_add(1);
        }
        calls.next = id.wrapping_add(1);
        calls.entries.insert(
            id,
            CallEntry {
                ctx,
                signals: signals.clone(),
                settle: None,
            },
        );
        CallHandle {
            id,
            signals,
            finished: false,
        }
    }

    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The handler's result is in: the call ends normally.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }
}

/// Call `id`'s handler will settle its result later: the receiver gets it. Called on the JS
/// thread right after the handler returned, so before `settle_call` can run (that takes a
/// Promise job at least).
pub(crate) fn settled_later(id: u32) -> tokio::sync::oneshot::Receiver<String> {
    let (settle, settled) = tokio::sync::oneshot::channel();
    if let Some(call) = calls().entries.get_mut(&id) {
        call.settle = Some(settle);
    }
    settled
}

impl Drop for CallHandle {
    fn drop(&mut self) {
        let entry = calls().entries.remove(&self.id);
        if !self.finished {
            // Dropped unfinished: the engine cancels the call's token before dropping it for
            // a client's cancel; past a deadline it drops first.
            let cancelled = entry.is_some_and(|call| call.ctx.is_cancelled());
            let _ = self
                .signals
                .reason
                .set(if cancelled { "cancelled" } else { "deadline" });
        }
        self.signals.ended.cancel();
    }
}

fn with_call<T>(id: u32, f: impl FnOnce(&CallEntry) -> T) -> Option<T> {
    calls().entries.get(&id).map(f)
}

/// The value (JSON text) a call's Promise resolved to, as `add_tool`'s handler returns it;
/// ignored once the call is over.
#[napi]
pub fn settle_call(id: u32, json: String) {
    let sender = calls()
        .entries
        .get_mut(&id)
        .and_then(|call| call.settle.take());
    if let Some(sender) = sender {
        let _ = sender.send(json);
    }
}

/// Reports progress; returns whether it was sent.
#[napi]
pub fn ctx_progress(id: u32, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
    with_call(id, |call| {
        call.ctx.progress(progress, total, message.as_deref())
    })
    .unwrap_or(false)
}

/// Sends a log message if `level` passes the client's level; returns whether it was sent.
#[napi]
pub fn ctx_log(id: u32, level: String, data: Value, logger: Option<String>) -> napi::Result<bool> {
    let level = LogLevel::parse(&level).ok_or_else(|| {
        napi::Error::new(
            napi::Status::InvalidArg,
            format!("unknown log level {level:?}"),
        )
    })?;
    Ok(with_call(id, |call| call.ctx.log_as(level, logger.as_deref(), data)).unwrap_or(false))
}

/// Streamable HTTP with an SSE answer: closes the call's connection (the client resumes).
#[napi]
pub fn ctx_close_sse_stream(id: u32) {
    with_call(id, |call| call.ctx.close_sse_stream());
}

/// Whether the call was cancelled, passed its deadline, or is over (`ctx.isCancelled`).
#[napi]
pub fn ctx_is_cancelled(id: u32) -> bool {
    with_call(id, |call| {
        call.ctx.is_cancelled() || call.signals.reason.get().is_some()
    })
    .unwrap_or(true)
}

/// What the client declared for the extension `extension` (core's `client_extension`), or
/// `null` when it did not, or once the call is over.
#[napi]
pub fn ctx_client_extension(id: u32, extension: String) -> Value {
    with_call(id, |call| call.ctx.client_extension(&extension).cloned())
        .flatten()
        .unwrap_or(Value::Null)
}

/// `{ requestId, toolName, protocolVersion, clientInfo, clientCapabilities, wantsProgress }`,
/// or `null` once the call is over.
#[napi]
pub fn ctx_info(id: u32) -> Value {
    with_call(id, |call| {
        let ctx = &call.ctx;
        let request_id = match ctx.request_id() {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_ref()),
        };
        serde_json::json!({
            "requestId": request_id,
            "toolName": ctx.tool_name(),
            "protocolVersion": ctx.protocol_version().as_str(),
            "clientInfo": ctx.client_info().and_then(|info| serde_json::to_value(info).ok()),
            "clientCapabilities": ctx.client_capabilities(),
            "rendersApps": ctx.client_renders_apps(),
            "wantsProgress": ctx.wants_progress(),
            "inputResponses": ctx.input_responses(),
            "requestState": ctx.request_state(),
            "traceContext": {
                "traceparent": ctx.trace_context().traceparent,
                "tracestate": ctx.trace_context().tracestate,
                "baggage": ctx.trace_context().baggage,
            },
        })
    })
    .unwrap_or(Value::Null)
}

/// `sampling/createMessage`, `elicitation/create` or `roots/list` (by `kind`: "sample",
/// "elicit", "roots"; "roots" answers with the list itself, as in every language); resolves
/// to `{ ok }` or `{ error }`.
#[napi]
pub async fn ctx_client_request(
    id: u32,
    kind: String,
    params: Value,
    timeout_ms: Option<u32>,
) -> Value {
    let Some(ctx) = with_call(id, |call| call.ctx.clone()) else {
        return errors::outcome(Err(toolwire::Error::Cancelled));
    };
    let options = request_options(timeout_ms);
    let result = match kind.as_str() {
        "sample" => ctx.sample(params, options).await,
        "elicit" => ctx.elicit(params, options).await,
        "roots" => ctx
            .list_roots(options)
            .await
            .map(|roots| serde_json::json!(roots)),
        other => Err(toolwire::Error::InvalidArgument(format!(
            "unknown client request kind {other:?}"
        ))),
    };
    errors::outcome(result)
}

/// Several `[method, params]` questions at once (one MRTR round in 2026-07-28, one after the
/// other in a session); resolves to `{ ok: [results] }` or `{ error }`.
#[napi]
pub async fn ctx_ask_all(id: u32, questions: Vec<Value>, timeout_ms: Option<u32>) -> Value {
    let Some(ctx) = with_call(id, |call| call.ctx.clone()) else {
        return errors::outcome(Err(toolwire::Error::Cancelled));
    };
    let questions = match questions
        .into_iter()
        .map(|question| match question {
            Value::Array(pair) if pair.len() == 2 => {
                let mut pair = pair.into_iter();
                match (pair.next(), pair.next()) {
                    (Some(Value::String(method)), Some(params)) => Ok((method, params)),
                    _ => Err(()),
                }
            }
            _ => Err(()),
        })
        .collect::<Result<Vec<_>, ()>>()
    {
        Ok(questions) => questions,
        Err(()) => {
            return errors::outcome(Err(toolwire::Error::InvalidArgument(
                "askAll takes [method, params] pairs".to_owned(),
            )));
        }
    };
    let result = ctx
        .ask_all(questions, request_options(timeout_ms))
        .await
        .map(Value::Array);
    errors::outcome(result)
}

/// Any request `method` to the client, sent as it is (a method named like a kind above is
/// still that method); resolves to `{ ok }` or `{ error }`.
#[napi]
pub async fn ctx_request(id: u32, method: String, params: Value, timeout_ms: Option<u32>) -> Value {
    let Some(ctx) = with_call(id, |call| call.ctx.clone()) else {
        return errors::outcome(Err(toolwire::Error::Cancelled));
    };
    let result = ctx
        .request(&method, params, request_options(timeout_ms))
        .await;
    errors::outcome(result)
}

fn request_options(timeout_ms: Option<u32>) -> RequestOptions {
    match timeout_ms {
        Some(ms) => RequestOptions::with_timeout(Duration::from_millis(u64::from(ms))),
        None => RequestOptions::default(),
    }
}

/// Resolves when the call ends: to `"cancelled"` or `"deadline"` if it was abandoned,
/// otherwise to `null`; a call that is already over gives `"cancelled"`.
#[napi]
pub async fn ctx_ended(id: u32) -> Option<String> {
    let Some(signals) = with_call(id, |call| call.signals.clone()) else {
        return Some("cancelled".to_owned());
    };
    signals.ended.cancelled().await;
    signals.reason.get().map(|reason| (*reason).to_owned())
}
