//! Middleware from Kotlin or Swift: a foreign trait core calls in front of every request but
//! `initialize`. Core decides what a request, a verdict and an outcome mean
//! (`toolwire::middleware`); this converts them to records and back.

use std::sync::Arc;
use std::time::Duration;

use toolwire::middleware as engine;
use toolwire::wire::json_text;
use toolwire::{ErrorCode, ErrorObject};

use crate::context::RequestId;
use crate::errors::ToolwireError;

/// What a middleware sees of an inbound request.
#[derive(Clone, Debug, uniffi::Record)]
pub struct RequestInfo {
    /// The JSON-RPC method, e.g. `"tools/call"`.
    pub method: String,
    /// What the request names: the tool or prompt (`params.name`) or the resource
    /// (`params.uri`), when it has one.
    pub name: Option<String>,
    /// The arguments of a `tools/call` or `prompts/get`, as JSON text.
    pub arguments_json: Option<String>,
    /// Who is calling: the bearer token's subject, when tokens are required.
    pub principal: Option<String>,
    /// The protocol version the request is served in (e.g. `"2025-11-25"`, `"2026-07-28"`).
    pub protocol_version: Option<String>,
    /// The request's id.
    pub request_id: RequestId,
    /// A number no other request of this process has: `after` names the request by it.
    pub sequence: u64,
}

/// What `before` decides.
#[derive(Clone, Debug, uniffi::Enum)]
pub enum Verdict {
    /// Handle the request (the next middleware decides first, if any).
    Continue,
    /// Answer with this JSON-RPC error instead.
    Refuse {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        detail: String,
        /// The error's `data`, as JSON text.
        data_json: Option<String>,
    },
    /// Answer a `tools/call` with an `isError` result of this text instead (another method
    /// gets it as a -32603 error).
    ToolError {
        /// The text the model reads.
        detail: String,
    },
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum OutcomeKind {
    /// A result.
    Result,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// 2026-07-28: a round that asks the client for input first (the request comes again).
    InputRequired,
    /// A task was created for the call (the tasks extension); its result comes later.
    TaskCreated,
    /// A JSON-RPC error (its code is the outcome's `code`).
    Error,
    /// No answer: the client cancelled it, or its session ended first.
    Cancelled,
    /// A middleware's `before` refused it (with an error or an `isError` result).
    Refused,
}

/// How a request ended, as `after` hears it.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Outcome {
    /// What the answer was.
    pub kind: OutcomeKind,
    /// The JSON-RPC error code, for `Error`.
    pub code: Option<i32>,
    /// Milliseconds from the request's arrival to its answer.
    pub elapsed_ms: f64,
}

/// A rule in front of every request but `initialize`, in Kotlin (`suspend fun`) or Swift
/// (`async throws`). The Kotlin wrapper's `server.middleware { request, next -> }` is built
/// on it.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait Middleware: Send + Sync {
    /// Decides whether the request is handled. Throwing `ToolwireError.Protocol` refuses it
    /// with that JSON-RPC error; anything else thrown refuses it with -32603 (and is logged).
    /// The request waits meanwhile (counted against `maxQueuedCalls`; a cancel reaches it).
    async fn before(&self, request: RequestInfo) -> Result<Verdict, ToolwireError>;

    /// Hears how a request ended, once its answer is out: `sequence` is the request's, as
    /// `before` saw it. Every middleware hears every request that passed middleware, also
    /// one an earlier middleware refused before this one's `before` ran. It is called on the
    /// engine's thread that sent the answer: return at once (hand the outcome on).
    fn after(&self, sequence: u64, outcome: Outcome);
}

/// A foreign middleware, as core's.
pub(crate) struct ForeignMiddleware(pub(crate) Arc<dyn Middleware>);

#[async_trait::async_trait]
impl engine::Middleware for ForeignMiddleware {
    async fn before(&self, request: &engine::RequestInfo) -> engine::Verdict {
        let decided = self.0.before(RequestInfo::from(request)).await;
        let verdict = match decided {
            Ok(verdict) => verdict,
            Err(ToolwireError::Protocol {
                code,
                detail,
                data_json,
            }) => Verdict::Refuse {
                code,
                detail,
                data_json,
            },
            Err(err) => {
                tracing::error!(method = %request.method, %err, "a middleware failed");
                return failed(format!("Internal error: a middleware failed: {err}"));
            }
        };
        match verdict {
            Verdict::Continue => engine::Verdict::Continue,
            Verdict::ToolError { detail } => engine::Verdict::ToolError(detail),
            Verdict::Refuse {
                code,
                detail,
                data_json,
            } => {
                let mut error = ErrorObject::new(ErrorCode(code), detail);
                if let Some(json) = data_json {
                    match serde_json::from_str(&json) {
                        Ok(data) => error = error.with_data(data),
                        Err(err) => {
                            return failed(format!(
                                "Internal error: a middleware's refusal data is not valid JSON: {err}"
                            ));
                        }
                    }
                }
                engine::Verdict::Refuse(error)
            }
        }
    }

    fn after(&self, request: &engine::RequestInfo, outcome: &engine::Outcome, elapsed: Duration) {
        let (kind, code) = match outcome {
            engine::Outcome::Result => (OutcomeKind::Result, None),
            engine::Outcome::ToolError => (OutcomeKind::ToolError, None),
            engine::Outcome::InputRequired => (OutcomeKind::InputRequired, None),
            engine::Outcome::TaskCreated => (OutcomeKind::TaskCreated, None),
            engine::Outcome::Error(code) => (OutcomeKind::Error, Some(code.0)),
            engine::Outcome::Cancelled => (OutcomeKind::Cancelled, None),
            engine::Outcome::Refused => (OutcomeKind::Refused, None),
            // A kind a later core adds (the enum is non-exhaustive): as Python's binding does.
            _ => (OutcomeKind::Refused, None),
        };
        let outcome = Outcome {
            kind,
            code,
            elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        };
        self.0.after(request.sequence, outcome);
    }
}

/// A rule that could not be checked does not let the request through.
fn failed(message: String) -> engine::Verdict {
    engine::Verdict::Refuse(ErrorObject::internal(message))
}

impl From<&engine::RequestInfo> for RequestInfo {
    fn from(request: &engine::RequestInfo) -> Self {
        RequestInfo {
            method: request.method.clone(),
            name: request.name.clone(),
            arguments_json: request.arguments.as_ref().map(json_text),
            principal: request.principal.clone(),
            protocol_version: request.protocol_version.map(|v| v.as_str().to_owned()),
            request_id: RequestId::from(&request.request_id),
            sequence: request.sequence,
        }
    }
}
