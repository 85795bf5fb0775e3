//! The one place where the engine's errors become JavaScript's idiom: an `Error` with a `code`
//! (as Node's own errors have), plus `rpcCode` and `data` when the client answered with an
//! error. The native layer hands over `{ code, message, rpcCode?, data? }`; `lib/errors.js`
//! only builds the `ToolwireError` from it.
//!
//! | code | when |
//! |---|---|
//! | `TOOLWIRE_REGISTRATION` | a definition was refused (tool, resource, template, prompt, completion) |
//! | `TOOLWIRE_CAPABILITY` | the client did not declare what a request to it needs |
//! | `TOOLWIRE_CLIENT_ERROR` | the client answered a request with an error (`rpcCode`, `data`) |
//! | `TOOLWIRE_TIMEOUT` | the client did not answer in time |
//! | `ABORT_ERR` | the request was cancelled (the tool call ended) |
//! | `TOOLWIRE_CLOSED` | the session ended first |
//! | `TOOLWIRE_TRANSPORT` | reading or writing the transport failed |
//! | `ERR_INVALID_ARG_VALUE` | an argument was invalid |

use serde_json::{Value, json};

pub(crate) fn describe(err: &toolwire::Error) -> Value {
    use toolwire::Error as E;
    let message = err.to_string();
    let code = match err {
        E::InvalidToolName { .. }
        | E::DuplicateTool { .. }
        | E::InvalidSchema { .. }
        | E::InvalidDefinition { .. } => "TOOLWIRE_REGISTRATION",
        E::CapabilityNotSupported { .. } | E::NoBackChannel { .. } => "TOOLWIRE_CAPABILITY",
        E::Timeout { .. } => "TOOLWIRE_TIMEOUT",
        E::Cancelled => "ABORT_ERR",
        E::Closed => "TOOLWIRE_CLOSED",
        E::Peer(error) => {
            return json!({
                "code": "TOOLWIRE_CLIENT_ERROR",
                "message": error.message,
                "rpcCode": error.code.0,
                "data": error.data,
            });
        }
        E::Transport(_) | E::NoRuntime(_) => "TOOLWIRE_TRANSPORT",
        E::InvalidArgument(_) => "ERR_INVALID_ARG_VALUE",
        _ => "TOOLWIRE_ERROR",
    };
    json!({ "code": code, "message": message })
}

/// An operation's outcome as JavaScript gets it: `{ ok: value }` or `{ error: {...} }`.
pub(crate) fn outcome(result: Result<Value, toolwire::Error>) -> Value {
    match result {
        Ok(value) => json!({ "ok": value }),
        Err(err) => json!({ "error": describe(&err) }),
    }
}

/// An engine error thrown straight from a native call (no outcome object to carry it): a
/// JavaScript `Error` whose message names what failed; `lib/` wraps it as a `ToolwireError`
/// with `TOOLWIRE_TRANSPORT`.
pub(crate) fn to_napi(err: toolwire::Error) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, err.to_string())
}
