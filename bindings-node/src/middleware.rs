//! `JsMiddleware`: a JavaScript middleware in front of every request. Core decides what the
//! request and the outcome say (`RequestInfo::to_json`, `Outcome::to_json`) and what a verdict
//! means (`Verdict::from_json`); this converts and reaches the JS thread.
//!
//! The JS layer's wrapper (`Server.middleware`, made in `lib/middleware.js`) is one function
//! `(token, json)`:
//! - `before`: `token` numbers the request, `json` is its `RequestInfo`. The wrapper returns the
//!   verdict's JSON text now (the middleware called `next()` or threw before it awaited), or
//!   nothing, and later calls `settleJson(token, verdictJson)` (`settle.rs`). No thread waits meanwhile:
//!   the engine awaits a oneshot.
//! - `after`: `token` is `null`, `json` the outcome (`kind`, `code`?, `elapsedMs`, `sequence`).
//!   Nothing is awaited.
//!
//! On the JS thread (a connection being fed) the function is called directly; from the
//! runtime's threads (HTTP sessions) through one weak threadsafe function, so a request's
//! `after` never overtakes its `before`.

use std::time::Duration;

use async_trait::async_trait;
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use serde_json::Value;
use toolwire::ErrorObject;
use toolwire::middleware::{Middleware, Outcome, RequestInfo, Verdict};
use toolwire::wire::json_text;

use crate::js_thread;
use crate::settle::{Remote, Returned, Token, call_wrapper};

/// `(token, json)`: `token` is the request's number for `before`, `null` for `after`.
pub(crate) type MiddlewareArgs = FnArgs<(Option<u32>, String)>;

pub(crate) struct JsMiddleware {
    func: FunctionRef<MiddlewareArgs, Unknown<'static>>,
    remote: Remote<MiddlewareArgs>,
}

fn refusal(why: String) -> Verdict {
    // A rule that cannot be checked does not let the request through.
    Verdict::Refuse(ErrorObject::internal(format!("Internal error: {why}")))
}

impl JsMiddleware {
    pub(crate) fn new(func: &Function<'_, MiddlewareArgs, Unknown<'static>>) -> napi::Result<Self> {
        Ok(JsMiddleware {
            func: func.create_ref()?,
            remote: func
                .build_threadsafe_function::<MiddlewareArgs>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()?,
        })
    }

    async fn start(&self, token: u32, request: String) -> napi::Result<Returned> {
        let args = FnArgs::from((Some(token), request));
        call_wrapper(&self.func, &self.remote, token, args).await
    }
}

#[async_trait]
impl Middleware for JsMiddleware {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        // Held until the verdict came: dropped, it forgets a verdict that never will.
        let held = Token::new();
        let verdict = match self
            .start(held.number(), json_text(&request.to_json()))
            .await
        {
            Ok(Returned::Ready(json)) => json,
            Ok(Returned::Later(rx)) => match rx.await {
                Ok(json) => json,
                Err(_) => return refusal("a middleware never decided".into()),
            },
            Err(err) => return refusal(format!("a middleware could not run: {}", err.reason)),
        };
        serde_json::from_str::<Value>(&verdict)
            .map_err(|err| err.to_string())
            .and_then(|verdict| Verdict::from_json(&verdict))
            .unwrap_or_else(|why| refusal(format!("a middleware answered wrongly: {why}")))
    }

    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        let mut heard = outcome.to_json();
        heard["elapsedMs"] = serde_json::json!(elapsed.as_secs_f64() * 1000.0);
        heard["sequence"] = serde_json::json!(request.sequence);
        let heard = json_text(&heard);
        if let Some(env) = js_thread::current_env() {
            // Quick: the wrapper only hands the outcome to the middleware's `next()`.
            let called = js_thread::in_handle_scope(&env, || {
                let func = self.func.borrow_back(&env)?;
                func.call(FnArgs::from((None, heard))).map(|_| ())
            });
            if let Err(err) = called {
                tracing::warn!(reason = %err.reason, "a middleware's outcome could not be delivered");
            }
            return;
        }
        let status = self.remote.call(
            FnArgs::from((None, heard)),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
        if status != Status::Ok {
            tracing::debug!(
                ?status,
                "a middleware's outcome was not delivered (the JavaScript thread is gone)"
            );
        }
    }
}
