//! The binding's one error type: core's `Error` mapped once, plus what host code throws.
//!
//! Kotlin sees `ToolwireException.<Variant>`, Swift `ToolwireError.<variant>`. The text is in
//! `detail` (not `message`, which Kotlin's `Throwable` owns).

use serde_json::Value;
use toolwire::host::json_text;
use toolwire::{Error, ToolError};

/// Everything the engine's API can fail with, in one flat enum.
#[derive(Debug, thiserror::Error, uniffi::Error)]
pub enum ToolwireError {
    /// A tool definition was refused (name, schema, duplicate).
    #[error("{detail}")]
    Registration {
        /// What is wrong.
        detail: String,
    },
    /// The client did not declare the capability a request to it needs.
    #[error("{detail}")]
    Capability {
        /// Which capability.
        detail: String,
    },
    /// The client answered a request with a JSON-RPC error.
    #[error("{detail}")]
    Client {
        /// The JSON-RPC error code.
        code: i64,
        /// The error's message.
        detail: String,
        /// The error's `data`, as JSON text.
        data_json: Option<String>,
    },
    /// A request got no answer in time: one to the client, or one of the in-process
    /// `Client`'s to the server (which is told it is cancelled).
    #[error("{detail}")]
    Timeout {
        /// How long we waited.
        detail: String,
    },
    /// The operation was cancelled (the call was cancelled or timed out).
    #[error("{detail}")]
    Cancelled {
        /// Why.
        detail: String,
    },
    /// The session ended first.
    #[error("{detail}")]
    Closed {
        /// Why.
        detail: String,
    },
    /// Reading or writing the transport failed.
    #[error("{detail}")]
    Transport {
        /// What failed.
        detail: String,
    },
    /// What the call needs is in use: stdin is already served by this process.
    #[error("{detail}")]
    Busy {
        /// What is in use.
        detail: String,
    },
    /// An argument to an API call was invalid (e.g. JSON text that does not parse).
    #[error("{detail}")]
    InvalidArgument {
        /// What is wrong.
        detail: String,
    },
    /// A tool handler failed; the client gets an `isError` result with `detail`. Host code
    /// may throw it on purpose; any other exception a handler throws arrives as this too. The
    /// server's lifespan failing to start is this too, for every serve and hold that waited
    /// ("the server's lifespan failed to start: …"): the app's own code failed.
    #[error("{detail}")]
    Handler {
        /// The message the client sees.
        detail: String,
    },
    /// A JSON-RPC error to answer with: thrown by a middleware, it refuses the request with
    /// this error; thrown by a tool, prompt or resource handler, the request fails with it
    /// (instead of an `isError` result), as `ToolResult.ProtocolError` does.
    #[error("{detail}")]
    Protocol {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        detail: String,
        /// The error's `data`, as JSON text (a middleware's refusal carries it).
        data_json: Option<String>,
    },
    /// What was asked for does not exist: thrown by a resource reader, the client gets
    /// -32002 (resource not found).
    #[error("{detail}")]
    NotFound {
        /// What is missing.
        detail: String,
    },
    /// 2026-07-28: the client's input is needed first. `CallContext.elicit`, `sample` and
    /// `listRoots` throw it (without requests) when the answer is not in this round: let it end
    /// the handler and the engine asks the client, who calls again. A handler (a prompt's or a
    /// resource's too) may throw it with its own `input_requests_json`
    /// (`{key: {method, params}}`) and `request_state` to ask itself.
    #[error("{detail}")]
    InputRequired {
        /// Why.
        detail: String,
        /// JSON text of the questions, by key, if the handler asks itself.
        input_requests_json: Option<String>,
        /// State for the next round (the engine seals it).
        request_state: Option<String>,
    },
    /// A JSON-RPC error answer to a request of the in-process `Client`'s (-32000 when its
    /// session ended first). Thrown by a `ClientAnswerer`, it is the error the server is
    /// answered with.
    #[error("{detail}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        detail: String,
        /// The error's `data`, as JSON text.
        data_json: Option<String>,
    },
    /// A failure inside the binding itself (a bug: please report it).
    #[error("{detail}")]
    Internal {
        /// What failed.
        detail: String,
    },
}

impl From<Error> for ToolwireError {
    fn from(err: Error) -> Self {
        let detail = err.to_string();
        match err {
            Error::InvalidToolName { .. }
            | Error::DuplicateTool { .. }
            | Error::InvalidSchema { .. }
            | Error::InvalidDefinition { .. } => ToolwireError::Registration { detail },
            Error::CapabilityNotSupported { .. } | Error::NoBackChannel { .. } => {
                ToolwireError::Capability { detail }
            }
            Error::Timeout { .. } => ToolwireError::Timeout { detail },
            Error::Cancelled => ToolwireError::Cancelled { detail },
            Error::Closed => ToolwireError::Closed { detail },
            Error::Peer(error) => ToolwireError::Client {
                code: i64::from(error.code.0),
                detail: error.message.to_string(),
                data_json: error.data.as_ref().map(json_text),
            },
            Error::Rpc(error) => ToolwireError::Rpc {
                code: error.code.0,
                detail: error.message.to_string(),
                data_json: error.data.as_ref().map(json_text),
            },
            Error::NoAnswer { .. } => ToolwireError::Timeout { detail },
            Error::Transport(_) | Error::NoRuntime(_) => ToolwireError::Transport { detail },
            Error::InvalidArgument(_) | Error::InvalidResult { .. } => {
                ToolwireError::InvalidArgument { detail }
            }
            Error::Busy(_) => ToolwireError::Busy { detail },
            Error::Lifespan(_) => ToolwireError::Handler { detail },
            Error::InputRequired => ToolwireError::InputRequired {
                detail,
                input_requests_json: None,
                request_state: None,
            },
            _ => ToolwireError::Internal { detail },
        }
    }
}

/// An exception the host's handler threw that is not a `ToolwireError` (Kotlin's
/// `RuntimeException`, a Swift error of another type).
impl From<uniffi::UnexpectedUniFFICallbackError> for ToolwireError {
    fn from(err: uniffi::UnexpectedUniFFICallbackError) -> Self {
        ToolwireError::Handler { detail: err.reason }
    }
}

impl ToolwireError {
    /// What a handler's error means for its call: the input it asks for (2026-07-28), a
    /// missing resource, or a failure with this text.
    pub(crate) fn into_tool_error(self) -> ToolError {
        match self {
            ToolwireError::InputRequired {
                input_requests_json,
                request_state,
                ..
            } => {
                let mut asked = toolwire::InputRequired::new();
                if let Some(json) = input_requests_json {
                    let requests = match serde_json::from_str::<Value>(&json) {
                        Ok(requests) => requests,
                        Err(err) => {
                            return ToolError::new(format!(
                                "the handler's input requests are not valid JSON: {err}"
                            ));
                        }
                    };
                    match toolwire::host::input_required_from_json(
                        &serde_json::json!({ "inputRequests": requests }),
                    ) {
                        Ok(parsed) => asked = parsed,
                        Err(err) => return err,
                    }
                }
                if let Some(state) = request_state {
                    asked = asked.state(state);
                }
                // Empty: the engine asks what ctx.elicit & co. recorded this round.
                ToolError::from(asked)
            }
            ToolwireError::NotFound { detail } => ToolError::not_found(detail),
            ToolwireError::Protocol { code, detail, .. } => ToolError::protocol(code, detail),
            other => ToolError::new(other.to_string()),
        }
    }
}

pub(crate) fn invalid_json(what: &str, err: serde_json::Error) -> ToolwireError {
    ToolwireError::InvalidArgument {
        detail: format!("{what} is not valid JSON: {err}"),
    }
}
