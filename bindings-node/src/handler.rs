//! `JsToolHandler`: the core's `ToolHandler` for a JavaScript function.
//!
//! The function is the JS layer's wrapper around the user's handler: it takes
//! `(nativeContext, arguments)` and returns a `CallToolResult`-shaped object or a Promise of
//! one (it catches the user's throws itself). It runs on the JS thread: directly when the
//! call starts while JavaScript is feeding frames (the common case, no thread hop), otherwise
//! through a weak threadsafe function (a call that waited for a concurrency slot).

use std::sync::Arc;

use async_trait::async_trait;
use napi::bindgen_prelude::{FnArgs, FromNapiValue, FunctionRef, Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status};
use serde_json::Value;
use toolwire::{CancellationToken, Context, ToolError, ToolHandler, ToolOutput};

use crate::context::CallHandle;
use crate::js_thread;

type Outcome = Result<ToolOutput, ToolError>;
/// `(callNumber, argumentsJson)`: JSON text is cheaper to hand over than a built object.
pub(crate) type CallArgs = FnArgs<(u32, String)>;

/// What a call hands the JS thread.
pub(crate) struct CallInput {
    call: u32,
    arguments: String,
}

pub(crate) type CallTsfn =
    ThreadsafeFunction<CallInput, Unknown<'static>, CallArgs, Status, false, true>;

pub(crate) struct JsToolHandler {
    pub(crate) func: FunctionRef<CallArgs, Unknown<'static>>,
    pub(crate) tsfn: Arc<CallTsfn>,
}

/// What the wrapper returned: a result (as JSON text) now, or a Promise of one.
enum Returned {
    Ready(String),
    Pending(Promise<String>),
}

fn settle(env: &Env, value: Unknown<'_>) -> napi::Result<Returned> {
    if value.is_promise()? {
        // SAFETY: `value` is a live value of `env`'s current scope.
        let promise = unsafe { Promise::<String>::from_napi_value(env.raw(), value.raw())? };
        Ok(Returned::Pending(promise))
    } else {
        // SAFETY: as above.
        Ok(Returned::Ready(unsafe {
            String::from_napi_value(env.raw(), value.raw())?
        }))
    }
}

fn output(json: &str) -> Outcome {
    let value = serde_json::from_str(json)
        .map_err(|why| ToolError::new(format!("the tool returned an invalid result: {why}")))?;
    ToolOutput::from_json(value)
        .map_err(|why| ToolError::new(format!("the tool returned an invalid result: {why}")))
}

fn js_failure(err: &napi::Error) -> ToolError {
    ToolError::new(format!("the tool's handler failed: {}", err.reason))
}

/// Marks the call as abandoned (cancelled or past its deadline) if its future is dropped
/// before it finished, so the handler's `AbortSignal` fires.
struct AbortOnDrop {
    call: CallHandle,
    cancel: CancellationToken,
    finished: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.finished {
            // The engine cancels the call's token before dropping it for a client's cancel;
            // past a deadline it drops first.
            let reason = if self.cancel.is_cancelled() {
                "cancelled"
            } else {
                "deadline"
            };
            self.call.abandon(reason);
        }
    }
}

#[async_trait]
impl ToolHandler for JsToolHandler {
    async fn call(&self, ctx: Context, arguments: Value) -> Outcome {
        let mut guard = AbortOnDrop {
            cancel: ctx.cancellation_token(),
            call: CallHandle::register(ctx),
            finished: false,
        };
        let call = guard.call.id();
        let arguments = arguments.to_string();
        let returned = match js_thread::current_env() {
            Some(env) => js_thread::in_handle_scope(&env, || {
                let func = self.func.borrow_back(&env)?;
                let value = func.call(FnArgs::from((call, arguments)))?;
                settle(&env, value)
            }),
            None => self.call_through_tsfn(call, arguments).await,
        };
        let result = match returned {
            Ok(Returned::Ready(json)) => output(&json),
            Ok(Returned::Pending(promise)) => match promise.await {
                Ok(json) => output(&json),
                Err(err) => Err(js_failure(&err)),
            },
            Err(err) => Err(js_failure(&err)),
        };
        guard.finished = true;
        result
    }
}

impl JsToolHandler {
    async fn call_through_tsfn(&self, call: u32, arguments: String) -> napi::Result<Returned> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let status = self.tsfn.call_with_return_value(
            CallInput { call, arguments },
            ThreadsafeFunctionCallMode::NonBlocking,
            move |value: napi::Result<Unknown<'static>>, env: Env| {
                let _ = tx.send(value.and_then(|value| settle(&env, value)));
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(napi::Error::new(
                Status::GenericFailure,
                format!("the JavaScript thread is not taking calls ({status})"),
            ));
        }
        rx.await.unwrap_or_else(|_| {
            Err(napi::Error::new(
                Status::GenericFailure,
                "the JavaScript thread dropped the call",
            ))
        })
    }
}

/// Builds the threadsafe function for calls that start off the JS thread.
pub(crate) fn call_tsfn(
    func: &napi::bindgen_prelude::Function<'_, CallArgs, Unknown<'static>>,
) -> napi::Result<CallTsfn> {
    func.build_threadsafe_function::<CallInput>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(|input| Ok(FnArgs::from((input.value.call, input.value.arguments))))
}
