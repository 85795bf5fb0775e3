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
//! | `TOOLWIRE_TIMEOUT` | the client did not answer in time (to the test client: the server) |
//! | `TOOLWIRE_SERVER_ERROR` | the server answered the test client with an error (`rpcCode`, `data`); `toolwire/testing` throws it as its `McpError` |
//! | `ABORT_ERR` | the request was cancelled (the tool call ended) |
//! | `TOOLWIRE_CLOSED` | the session ended first |
//! | `TOOLWIRE_TRANSPORT` | reading or writing the transport failed (e.g. an HTTP port in use) |
//! | `TOOLWIRE_BUSY` | stdin is already served by this process (a second `serveStdio`) |
//! | `TOOLWIRE_LIFESPAN` | the server's lifespan failed to start (the JS layer rejects with what its start threw when it has it) |
//! | `TOOLWIRE_INPUT_REQUIRED` | 2026-07-28: the client's answer is needed first (let it end the tool) |
//! | `ERR_INVALID_ARG_VALUE` | an argument was invalid (e.g. `maxConcurrentCalls: 0`, an HTTP path without `/`) |
//!
//! A native call that can fail this way returns the description in place of its value
//! ([`or_described`]); JavaScript throws it.

use napi::Either;
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
        E::Timeout { .. } | E::NoAnswer { .. } => "TOOLWIRE_TIMEOUT",
        E::Cancelled => "ABORT_ERR",
        E::Closed => "TOOLWIRE_CLOSED",
        E::Lifespan(_) => "TOOLWIRE_LIFESPAN",
        E::Peer(error) => {
            return json!({
                "code": "TOOLWIRE_CLIENT_ERROR",
                "message": error.message,
                "rpcCode": error.code.0,
                "data": error.data,
            });
        }
        E::Rpc(error) => {
            return json!({
                "code": "TOOLWIRE_SERVER_ERROR",
                "message": error.message,
                "rpcCode": error.code.0,
                "data": error.data,
            });
        }
        E::Transport(_) | E::NoRuntime(_) => "TOOLWIRE_TRANSPORT",
        E::Busy(_) => "TOOLWIRE_BUSY",
        E::InputRequired => "TOOLWIRE_INPUT_REQUIRED",
        E::InvalidArgument(_) | E::InvalidResult { .. } => "ERR_INVALID_ARG_VALUE",
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

/// A native call's value, or the description of the engine error that stopped it (which
/// JavaScript throws as a `ToolwireError`).
pub(crate) fn or_described<T>(result: Result<T, toolwire::Error>) -> Either<T, Value> {
    match result {
        Ok(value) => Either::A(value),
        Err(err) => Either::B(describe(&err)),
    }
}
