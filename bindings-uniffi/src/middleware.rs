//! Middleware from Kotlin or Swift: a foreign function core starts around every request but
//! `initialize` (`toolwire::host::AroundMiddleware`), which reports how it ended to its
//! `AroundCall`. Core decides what a request, an ending and an outcome mean; this converts them
//! to records and back.

use std::sync::Arc;

use toolwire::host::json_text;
use toolwire::host::{Finished, HostAround};
use toolwire::middleware as engine;
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
    /// A number no other request of this process has (`cancelled` names the request by it).
    pub sequence: u64,
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

/// How a request ended, as `next` returns it.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Outcome {
    /// What the answer was.
    pub kind: OutcomeKind,
    /// The JSON-RPC error code, for `Error`.
    pub code: Option<i32>,
    /// Milliseconds from the request's arrival to its answer.
    pub elapsed_ms: f64,
}

/// How a middleware function ended, as the foreign side reports it to its [`AroundCall`].
#[derive(Clone, Debug, uniffi::Enum)]
pub enum Ending {
    /// It returned.
    Returned,
    /// It refused the request with this JSON-RPC error (`ToolwireError.Protocol`).
    Refused {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        detail: String,
        /// The error's `data`, as JSON text.
        data_json: Option<String>,
    },
    /// It refused a `tools/call` with an `isError` result of this text (`ToolwireError.Handler`;
    /// another method gets it as a -32603 error).
    ToolError {
        /// The text the model reads.
        detail: String,
    },
    /// It threw anything else: the text goes to the engine's log.
    Failed {
        /// What was thrown (a stack trace).
        detail: String,
    },
}

/// A middleware around every request but `initialize`, in Kotlin or Swift. The engine decides
/// what its ending means (`next` once; a return without it, or a failure, refuses the request
/// with -32603; what runs after it only observes). The Kotlin wrapper's
/// `server.middleware { request, next -> }` is built on it.
#[uniffi::export(with_foreign)]
pub trait AroundFunction: Send + Sync {
    /// Starts the function for `request` and returns at once (called on an engine thread, or on
    /// the web server's thread for a mounted endpoint's request answered in one step); the
    /// function reports through `call`. The request waits meanwhile (counted against
    /// `maxQueuedCalls`).
    fn start(&self, request: RequestInfo, call: Arc<AroundCall>);

    /// The request `sequence` was given up before the function decided (the client cancelled
    /// it, its session ended, or it was refused while waiting): stop the function. A `next`
    /// after this hears how the request ended.
    fn cancelled(&self, sequence: u64);
}

/// Hears how a request ended, once its answer is out (on the engine's thread that sent it:
/// hand the outcome on and return).
#[uniffi::export(with_foreign)]
pub trait OutcomeListener: Send + Sync {
    /// The request's outcome.
    fn ended(&self, outcome: Outcome);
}

/// One request's way through a middleware function: it reports here.
#[derive(uniffi::Object)]
pub struct AroundCall(toolwire::host::AroundCall);

#[uniffi::export]
impl AroundCall {
    /// The function called its `next`: the request goes on, and `listener` hears how it ended.
    /// Fails when called before for this request, or after the function's ending was
    /// reported.
    pub fn next(&self, listener: Arc<dyn OutcomeListener>) -> Result<(), ToolwireError> {
        self.0
            .next(Box::new(move |ended| listener.ended(Outcome::from(&ended))))
            .map_err(ToolwireError::from)
    }

    /// The function ended.
    pub fn finish(&self, ending: Ending) {
        self.0.finish(match ending {
            Ending::Returned => Finished::Returned,
            Ending::Refused {
                code,
                detail,
                data_json,
            } => {
                let mut error = ErrorObject::new(ErrorCode(code), detail);
                if let Some(json) = data_json {
                    match serde_json::from_str(&json) {
                        Ok(data) => error = error.with_data(data),
                        Err(err) => {
                            return self.0.finish(Finished::Failed(format!(
                                "its refusal's data is not valid JSON: {err}"
                            )));
                        }
                    }
                }
                Finished::Refused(engine::Refusal::Error(error))
            }
            Ending::ToolError { detail } => Finished::Refused(engine::Refusal::ToolError(detail)),
            Ending::Failed { detail } => Finished::Failed(detail),
        });
    }

    /// Whether the request was given up before the function decided.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// A foreign middleware function, as core's around middleware runs it.
pub(crate) struct ForeignAround(pub(crate) Arc<dyn AroundFunction>);

impl HostAround for ForeignAround {
    fn start(&self, request: &engine::RequestInfo, call: toolwire::host::AroundCall) {
        self.0
            .start(RequestInfo::from(request), Arc::new(AroundCall(call)));
    }

    fn cancelled(&self, request: &engine::RequestInfo) {
        self.0.cancelled(request.sequence);
    }
}

impl From<&engine::Ended> for Outcome {
    fn from(ended: &engine::Ended) -> Self {
        let (kind, code) = match &ended.outcome {
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
        Outcome {
            kind,
            code,
            elapsed_ms: ended.elapsed.as_secs_f64() * 1000.0,
        }
    }
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
