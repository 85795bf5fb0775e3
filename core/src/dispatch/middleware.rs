//! Middleware: a rule of the host's own in front of every inbound request (an allow-list by
//! principal, a rate limit), and a look at each outcome (an audit log, timings).
//!
//! `before` runs before the request is handled and may refuse it; `after` hears how it ended
//! and how long it took. Middlewares run in the order they were added; the first refusal
//! answers. A middleware that finishes at once (no awaiting) keeps the session's order of
//! handling; one that awaits lets later requests go ahead meanwhile, as concurrent requests
//! may anyway. `initialize` passes no middleware: the session must exist before calls do.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;

use crate::protocol::ProtocolVersion;
use crate::wire::{ErrorCode, ErrorObject, RequestId};

/// What a middleware sees of an inbound request.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestInfo {
    /// The JSON-RPC method, e.g. `"tools/call"`.
    pub method: String,
    /// What the request names: the tool or prompt (`params.name`) or the resource
    /// (`params.uri`), when it has one.
    pub name: Option<String>,
    /// The arguments of a `tools/call` or `prompts/get`.
    pub arguments: Option<Value>,
    /// Who is calling: the bearer token's subject, when tokens are required.
    pub principal: Option<String>,
    /// The protocol version the request is served in (`None` in a session not yet initialized).
    pub protocol_version: Option<ProtocolVersion>,
    /// The request's id.
    pub request_id: RequestId,
    /// A number no other request of this process has: `before` and `after` of one request
    /// (and an audit log's lines) match by it.
    pub sequence: u64,
}

/// Numbers the requests that pass middleware.
static SEQUENCE: AtomicU64 = AtomicU64::new(1);

impl RequestInfo {
    pub(crate) fn new(
        method: &str,
        params: Option<&Value>,
        request_id: &RequestId,
        principal: Option<&str>,
        protocol_version: Option<ProtocolVersion>,
    ) -> Self {
        let text = |key: &str| {
            params
                .and_then(|p| p.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let arguments = match method {
            "tools/call" | "prompts/get" => params.and_then(|p| p.get("arguments")).cloned(),
            _ => None,
        };
        RequestInfo {
            method: method.to_owned(),
            name: text("name").or_else(|| text("uri")),
            arguments,
            principal: principal.map(str::to_owned),
            protocol_version,
            request_id: request_id.clone(),
            sequence: SEQUENCE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// As bindings hand it to host code: `{"method", "name"?, "arguments"?, "principal"?,
    /// "protocolVersion"?, "requestId", "sequence"}`.
    pub fn to_json(&self) -> Value {
        let mut json = serde_json::json!({
            "method": self.method,
            "requestId": self.request_id.to_json(),
            "sequence": self.sequence,
        });
        let optional = [
            ("name", self.name.clone().map(Value::String)),
            ("arguments", self.arguments.clone()),
            ("principal", self.principal.clone().map(Value::String)),
            (
                "protocolVersion",
                self.protocol_version
                    .map(|v| Value::String(v.as_str().to_owned())),
            ),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                json[key] = value;
            }
        }
        json
    }
}

/// What `before` decides.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Verdict {
    /// Handle the request (the next middleware decides first, if any).
    Continue,
    /// Answer with this JSON-RPC error instead.
    Refuse(ErrorObject),
    /// Answer a `tools/call` with an `isError` result of this text instead, for the model to
    /// read. (Another method gets it as a -32603 error.)
    ToolError(String),
}

impl Verdict {
    /// A host's verdict as bindings carry it: `{"continue": true}`, `{"refuse": {"code",
    /// "message", "data"?}}` or `{"toolError": "text"}`. Anything else is a mistake of the
    /// host's middleware, said in the `Err` (`Error::InvalidResult`).
    pub fn from_json(value: &Value) -> Result<Verdict, crate::Error> {
        Self::read(value).map_err(|message| crate::Error::InvalidResult {
            kind: "middleware verdict",
            message,
        })
    }

    fn read(value: &Value) -> Result<Verdict, String> {
        if value.get("continue") == Some(&Value::Bool(true)) {
            return Ok(Verdict::Continue);
        }
        if let Some(text) = value.get("toolError") {
            return text
                .as_str()
                .map(|text| Verdict::ToolError(text.to_owned()))
                .ok_or_else(|| "\"toolError\" must be a string".to_owned());
        }
        if let Some(refusal) = value.get("refuse") {
            let code = refusal.get("code").and_then(Value::as_i64);
            let message = refusal.get("message").and_then(Value::as_str);
            let (Some(code), Some(message)) = (code, message) else {
                return Err("\"refuse\" needs an integer \"code\" and a string \"message\"".into());
            };
            let code = i32::try_from(code)
                .map_err(|_| format!("error code {code} is not a 32-bit integer"))?;
            let mut error = ErrorObject::new(ErrorCode(code), message.to_owned());
            if let Some(data) = refusal.get("data") {
                error = error.with_data(data.clone());
            }
            return Ok(Verdict::Refuse(error));
        }
        Err(format!("not a middleware verdict: {value}"))
    }
}

/// How a request ended, as `after` hears it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A result.
    Result,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// 2026-07-28: a round that asks the client for input first (the request comes again).
    InputRequired,
    /// A task was created for the call (the tasks extension); its result comes later.
    TaskCreated,
    /// A JSON-RPC error with this code.
    Error(ErrorCode),
    /// No answer: the client cancelled it, or its session ended first.
    Cancelled,
    /// A middleware's `before` refused it (with an error or an `isError` result).
    Refused,
}

impl Outcome {
    /// As bindings hand it to host code: `{"kind": "result" | "toolError" | "error" |
    /// "inputRequired" | "taskCreated" | "cancelled" | "refused", "code"?: n}`.
    pub fn to_json(&self) -> Value {
        match self {
            Outcome::Result => serde_json::json!({"kind": "result"}),
            Outcome::ToolError => serde_json::json!({"kind": "toolError"}),
            Outcome::InputRequired => serde_json::json!({"kind": "inputRequired"}),
            Outcome::TaskCreated => serde_json::json!({"kind": "taskCreated"}),
            Outcome::Error(code) => serde_json::json!({"kind": "error", "code": code.0}),
            Outcome::Cancelled => serde_json::json!({"kind": "cancelled"}),
            Outcome::Refused => serde_json::json!({"kind": "refused"}),
        }
    }
}

/// A rule in front of every inbound request, and a look at how each ended.
#[async_trait]
pub trait Middleware: Send + Sync + 'static {
    /// Decides whether the request is handled. The default lets everything through.
    async fn before(&self, request: &RequestInfo) -> Verdict {
        let _ = request;
        Verdict::Continue
    }

    /// Hears how a request that reached `before` ended, and how long it took from its
    /// arrival to its answer. It runs where the answer is sent: keep it short.
    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        let _ = (request, outcome, elapsed);
    }
}

#[async_trait]
impl<T: Middleware + ?Sized> Middleware for Arc<T> {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        (**self).before(request).await
    }

    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        (**self).after(request, outcome, elapsed);
    }
}

/// The server's middlewares, in order; read on every request once any is set.
#[derive(Default)]
pub(crate) struct Chain {
    any: AtomicBool,
    middlewares: RwLock<Arc<[Arc<dyn Middleware>]>>,
}

impl Chain {
    pub(crate) fn add(&self, middleware: Arc<dyn Middleware>) {
        let mut slot = self.middlewares.write().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<_> = slot.iter().cloned().collect();
        all.push(middleware);
        *slot = all.into();
        self.any.store(true, Ordering::Release);
    }

    /// The middlewares now, or `None` (one atomic load) when there are none.
    pub(crate) fn current(&self) -> Option<Arc<[Arc<dyn Middleware>]>> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        Some(
            self.middlewares
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

/// Runs `before` of each in turn; the first that does not continue decides.
pub(crate) async fn decide(middlewares: &[Arc<dyn Middleware>], request: &RequestInfo) -> Verdict {
    for middleware in middlewares {
        match middleware.before(request).await {
            Verdict::Continue => {}
            other => return other,
        }
    }
    Verdict::Continue
}

/// A request waiting for a middleware that awaits: counted against `max_queued_calls`, the
/// bound every waiting call shares, while it waits.
pub(crate) struct WaitingSlot(Arc<std::sync::atomic::AtomicUsize>);

impl WaitingSlot {
    pub(crate) fn take(server: &crate::dispatch::server::ServerInner) -> Option<Self> {
        let waiting = server.queued_calls.clone();
        let before = waiting.fetch_add(1, Ordering::AcqRel);
        if before >= server.options.max_queued_calls {
            waiting.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(WaitingSlot(waiting))
    }
}

impl Drop for WaitingSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Carried by a request's responder: tells every middleware how it ended.
pub(crate) struct Observer {
    middlewares: Arc<[Arc<dyn Middleware>]>,
    request: Arc<RequestInfo>,
    started: Instant,
}

impl Observer {
    pub(crate) fn new(middlewares: Arc<[Arc<dyn Middleware>]>, request: Arc<RequestInfo>) -> Self {
        Observer {
            middlewares,
            request,
            started: Instant::now(),
        }
    }

    /// Tells every middleware; a middleware's panic is caught (the answer is out already).
    pub(crate) fn finish(self, outcome: Outcome) {
        let elapsed = self.started.elapsed();
        for middleware in self.middlewares.iter() {
            let heard = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                middleware.after(&self.request, &outcome, elapsed);
            }));
            if heard.is_err() {
                tracing::error!(method = %self.request.method, "a middleware's after panicked");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_json_and_mistakes_named() {
        assert!(matches!(
            Verdict::from_json(&serde_json::json!({"continue": true})),
            Ok(Verdict::Continue)
        ));
        assert!(matches!(
            Verdict::from_json(&serde_json::json!({"toolError": "no"})),
            Ok(Verdict::ToolError(text)) if text == "no"
        ));
        let Ok(Verdict::Refuse(error)) = Verdict::from_json(
            &serde_json::json!({"refuse": {"code": -32001, "message": "Forbidden", "data": 1}}),
        ) else {
            panic!("a refusal");
        };
        assert_eq!(
            (error.code.0, error.message.as_ref()),
            (-32001, "Forbidden")
        );
        for bad in [
            serde_json::json!({"refuse": {"code": "x", "message": "m"}}),
            serde_json::json!({"refuse": {"code": 1_i64 << 40, "message": "m"}}),
            serde_json::json!({"toolError": 3}),
            serde_json::json!(null),
        ] {
            assert!(Verdict::from_json(&bad).is_err(), "{bad}");
        }
    }
}
