//! Resources, prompts, completers and token validators whose code is JavaScript, as core's
//! `JsonCallback` (core's `ViaJson` decides the request and answer shapes).
//!
//! The JS layer's wrapper takes `(token, requestJson, call)` and returns the answer as JSON text, or
//! nothing and later calls `settleJson(token, json)` when a Promise settles. On the JS thread
//! it is called directly; from the runtime's threads (HTTP sessions) through a threadsafe
//! function.

use async_trait::async_trait;
use napi::bindgen_prelude::{FnArgs, FunctionRef, Unknown};
use serde_json::Value;
use toolwire::host::JsonCallback;
use toolwire::host::json_text;
use toolwire::{Context, ToolError};

use crate::context::CallHandle;
use crate::settle::{Remote, Returned, Token, call_wrapper};

/// `(token, requestJson, call)`: `call` numbers the request's context (a resource read's,
/// prompt's or completion's; see `context.rs`), absent for a token check.
pub(crate) type JsonArgs = FnArgs<(u32, String, Option<u32>)>;

pub(crate) struct JsJsonHandler {
    func: FunctionRef<JsonArgs, Unknown<'static>>,
    remote: Remote<JsonArgs>,
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
        // Held until the answer came: dropped, it forgets an answer that never will.
        let held = Token::new();
        let token = held.number();
        let request = json_text(&request);
        let args = FnArgs::from((token, request, call));
        let returned = call_wrapper(&self.func, &self.remote, token, args).await;
        let json = match returned {
            Ok(Returned::Ready(json)) => json,
            Ok(Returned::Later(rx)) => rx
                .await
                .map_err(|_| ToolError::new("the handler never settled its result"))?,
            Err(err) => {
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
