//! `JsToolHandler`: the core's `ToolHandler` for a JavaScript function.
//!
//! The function is the JS layer's wrapper around the user's handler: it takes
//! `(callNumber, argumentsJson)` and returns the JSON text of the value the handler returned,
//! or nothing and later calls `settleCall(callNumber, json)` when the handler's Promise
//! settles (it catches the user's throws itself, as an `isError` CallToolResult). Core's
//! `ToolOutput::from_returned` turns that value into the result, as in every language.
//!
//! The function is called directly: every call is first polled while its connection is fed on
//! the JS thread, and pending calls are polled there too (core's `LocalExecutor`).

use async_trait::async_trait;
use napi::bindgen_prelude::{FnArgs, FromNapiValue, FunctionRef, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status};
use serde_json::Value;
use toolwire::host::json_text;
use toolwire::{Context, ToolError, ToolHandler, ToolOutput};

use crate::context::{self, CallHandle};
use crate::js_thread;

type Outcome = Result<ToolOutput, ToolError>;
/// `(callNumber, argumentsJson)`: JSON text is cheaper to hand over than a built object.
pub(crate) type CallArgs = FnArgs<(u32, String)>;

/// The same function, callable from any thread (sessions the engine serves itself, as over
/// HTTP, run calls on the runtime's threads); weak, so it keeps no Node process alive.
pub(crate) type RemoteTool =
    ThreadsafeFunction<CallArgs, Unknown<'static>, CallArgs, Status, false, true>;

pub(crate) struct JsToolHandler {
    pub(crate) func: FunctionRef<CallArgs, Unknown<'static>>,
    pub(crate) remote: RemoteTool,
}

/// What the wrapper returned: the value (as JSON text) now, or nothing: it calls
/// `settleCall` when the handler's Promise settles.
enum Returned {
    Ready(String),
    Later(tokio::sync::oneshot::Receiver<String>),
}

/// Reads what the wrapper returned for call `call` (on the JS thread, right after it returned).
fn settle(env: &Env, call: u32, value: Unknown<'_>) -> napi::Result<Returned> {
    if matches!(
        value.get_type()?,
        napi::ValueType::Undefined | napi::ValueType::Null
    ) {
        return Ok(Returned::Later(context::settled_later(call)));
    }
    // SAFETY: `value` is a live value of `env`'s current scope.
    Ok(Returned::Ready(unsafe {
        String::from_napi_value(env.raw(), value.raw())?
    }))
}

/// What the wrapper puts before the JSON of an `InputRequired` the tool returned: no JSON text
/// starts so, so it cannot be mistaken for data the tool returned.
const INPUT_REQUIRED_PREFIX: &str = "InputRequired:";

/// What the wrapper puts before a thrown ProtocolError's `{code, message}`.
const PROTOCOL_ERROR_PREFIX: &str = "ProtocolError:";

/// The handler's returned value (JSON text) as the call's output, by core's one rule.
fn output(json: &str) -> Outcome {
    if let Some(error) = json.strip_prefix(PROTOCOL_ERROR_PREFIX) {
        let error: Value = serde_json::from_str(error).map_err(|why| {
            ToolError::new(format!("the tool threw an invalid ProtocolError: {why}"))
        })?;
        let code = error["code"]
            .as_i64()
            .and_then(|code| i32::try_from(code).ok())
            .ok_or_else(|| ToolError::new("the tool threw a ProtocolError without a valid code"))?;
        return Err(ToolError::protocol(
            code,
            error["message"].as_str().unwrap_or_default(),
        ));
    }
    if let Some(asked) = json.strip_prefix(INPUT_REQUIRED_PREFIX) {
        let asked: Value = serde_json::from_str(asked).map_err(|why| {
            ToolError::new(format!("the tool returned an invalid InputRequired: {why}"))
        })?;
        return Err(toolwire::host::input_required_from_json(&asked)?.into());
    }
    let value = serde_json::from_str(json)
        .map_err(|why| ToolError::new(format!("invalid tool result: not JSON: {why}")))?;
    // "invalid tool result: …", what is wrong and what to return.
    ToolOutput::from_returned(value).map_err(ToolError::from)
}

fn js_failure(err: &napi::Error) -> ToolError {
    ToolError::new(format!("the tool's handler failed: {}", err.reason))
}

#[async_trait]
impl ToolHandler for JsToolHandler {
    async fn call(&self, ctx: Context, arguments: Value) -> Outcome {
        // Dropped unfinished (a cancel, a deadline), it fires the handler's AbortSignal.
        let mut guard = CallHandle::register(ctx);
        let call = guard.id();
        let arguments = json_text(&arguments);
        let returned = match js_thread::current_env() {
            Some(env) => js_thread::in_handle_scope(&env, || {
                let func = self.func.borrow_back(&env)?;
                let value = func.call(FnArgs::from((call, arguments)))?;
                settle(&env, call, value)
            }),
            // Off the JS thread (a session the engine serves, e.g. over HTTP): hop to it.
            None => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let status = self.remote.call_with_return_value(
                    FnArgs::from((call, arguments)),
                    ThreadsafeFunctionCallMode::NonBlocking,
                    move |value, env| {
                        let _ = tx.send(value.and_then(|value| settle(&env, call, value)));
                        Ok(())
                    },
                );
                if status == Status::Ok {
                    rx.await.unwrap_or_else(|_| {
                        Err(napi::Error::new(
                            Status::GenericFailure,
                            "the JavaScript thread stopped before the tool ran",
                        ))
                    })
                } else {
                    Err(napi::Error::new(status, "the JavaScript thread is gone"))
                }
            }
        };
        let result = match returned {
            Ok(Returned::Ready(json)) => output(&json),
            Ok(Returned::Later(settled)) => match settled.await {
                Ok(json) => output(&json),
                Err(_) => Err(ToolError::new(
                    "the tool's handler never settled its result",
                )),
            },
            Err(err) => Err(js_failure(&err)),
        };
        guard.finish();
        result
    }
}

/// One problem a host-language check found in a call's arguments.
#[napi_derive::napi(object)]
pub struct ArgumentIssue {
    /// JSON Pointer to the offending value (`""` is the root).
    pub path: String,
    pub message: String,
}

/// The `isError` text for arguments a zod schema refused, worded as the engine words its own
/// schema check.
#[napi_derive::napi]
pub fn invalid_arguments_text(tool: String, issues: Vec<ArgumentIssue>) -> String {
    toolwire::host::invalid_arguments_text(&tool, &violations(issues))
}

/// The -32602 message for prompt arguments a zod schema refused, worded as the engine words
/// tool arguments.
#[napi_derive::napi]
pub fn invalid_prompt_arguments_text(prompt: String, issues: Vec<ArgumentIssue>) -> String {
    toolwire::host::invalid_prompt_arguments_text(&prompt, &violations(issues))
}

fn violations(issues: Vec<ArgumentIssue>) -> Vec<toolwire::Violation> {
    issues
        .into_iter()
        .map(|issue| toolwire::Violation {
            path: issue.path,
            message: issue.message,
        })
        .collect()
}
