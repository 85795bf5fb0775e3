//! Resources, prompts, completers and token validators whose code is JavaScript, as core's
//! `JsonCallback` (core's `ViaJson` decides the request and answer shapes).
//!
//! The JS layer's wrapper takes `(token, requestJson, call)` and returns the answer as JSON text, or
//! nothing and later calls `settleJson(token, json)` when a Promise settles. On the JS thread
//! it is called directly; from the runtime's threads (HTTP sessions) through a threadsafe
//! function.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use async_trait::async_trait;
use napi::bindgen_prelude::{FnArgs, FromNapiValue, FunctionRef, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status};
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::host::JsonCallback;
use toolwire::{Context, ToolError};

use crate::context::CallHandle;
use crate::js_thread;

/// `(token, requestJson, call)`: `call` numbers the request's context (a resource read's,
/// prompt's or completion's; see `context.rs`), absent for a token check.
pub(crate) type JsonArgs = FnArgs<(u32, String, Option<u32>)>;
type Remote = ThreadsafeFunction<JsonArgs, Unknown<'static>, JsonArgs, Status, false, true>;

pub(crate) struct JsJsonHandler {
    func: FunctionRef<JsonArgs, Unknown<'static>>,
    remote: Remote,
}

#[derive(Default)]
struct Pending {
    next: u32,
    waiting: HashMap<u32, oneshot::Sender<String>>,
}

fn pending() -> std::sync::MutexGuard<'static, Pending> {
    static PENDING: OnceLock<Mutex<Pending>> = OnceLock::new();
    PENDING
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Delivers the answer of a wrapper that returned nothing at first.
#[napi]
pub fn settle_json(token: u32, json: String) {
    if let Some(sender) = pending().waiting.remove(&token) {
        let _ = sender.send(json);
    }
}

enum Returned {
    Ready(String),
    Later(oneshot::Receiver<String>),
}

fn read_returned(env: &Env, token: u32, value: Unknown<'_>) -> napi::Result<Returned> {
    if matches!(
        value.get_type()?,
        napi::ValueType::Undefined | napi::ValueType::Null
    ) {
        let (tx, rx) = oneshot::channel();
        pending().waiting.insert(token, tx);
        return Ok(Returned::Later(rx));
    }
    // SAFETY: `value` is a live value of `env`'s current scope.
    Ok(Returned::Ready(unsafe {
        String::from_napi_value(env.raw(), value.raw())?
    }))
}

impl JsJsonHandler {
    pub(crate) fn new(
        func: &napi::bindgen_prelude::Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<Self> {
        Ok(JsJsonHandler {
            func: func.create_ref()?,
            remote: func
                .build_threadsafe_function::<JsonArgs>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()?,
        })
    }
}

#[async_trait]
impl JsonCallback for JsJsonHandler {
    async fn call(&self, request: Value) -> Result<Value, ToolError> {
        self.call_with_context(request, None).await
    }

    async fn call_with_context(
        &self,
        request: Value,
        context: Option<Context>,
    ) -> Result<Value, ToolError> {
        // The context lives while the handler runs; JavaScript holds its number.
        let mut handle = context.map(CallHandle::register);
        let call = handle.as_ref().map(CallHandle::id);
        let answer = self.answer(request, call).await;
        if let Some(handle) = handle.as_mut() {
            handle.finish();
        }
        answer
    }
}

impl JsJsonHandler {
    async fn answer(&self, request: Value, call: Option<u32>) -> Result<Value, ToolError> {
        let token = {
            let mut pending = pending();
            let mut token = pending.next;
            while pending.waiting.contains_key(&token) {
                token = token.wrapping_add(1);
            }
            pending.next = token.wrapping_add(1);
            token
        };
        let request = request.to_string();
        let returned = match js_thread::current_env() {
            Some(env) => js_thread::in_handle_scope(&env, || {
                let func = self.func.borrow_back(&env)?;
                let value = func.call(FnArgs::from((token, request, call)))?;
                read_returned(&env, token, value)
            }),
            None => {
                let (tx, rx) = oneshot::channel();
                let status = self.remote.call_with_return_value(
                    FnArgs::from((token, request, call)),
                    ThreadsafeFunctionCallMode::NonBlocking,
                    move |value, env| {
                        let _ = tx.send(value.and_then(|value| read_returned(&env, token, value)));
                        Ok(())
                    },
                );
                if status == Status::Ok {
                    rx.await.unwrap_or_else(|_| {
                        Err(napi::Error::new(
                            Status::GenericFailure,
                            "the JavaScript thread stopped",
                        ))
                    })
                } else {
                    Err(napi::Error::new(status, "the JavaScript thread is gone"))
                }
            }
        };
        let json = match returned {
            Ok(Returned::Ready(json)) => json,
            Ok(Returned::Later(rx)) => rx
                .await
                .map_err(|_| ToolError::new("the handler never settled its result"))?,
            Err(err) => {
                pending().waiting.remove(&token);
                return Err(ToolError::new(format!(
                    "the handler failed: {}",
                    err.reason
                )));
            }
        };
        serde_json::from_str(&json)
            .map_err(|why| ToolError::new(format!("the handler returned invalid JSON: {why}")))
    }
}
