//! `JsAround`: a JavaScript `server.middleware(fn)` around every request. Core decides what its
//! ending means (`toolwire::host::AroundMiddleware`: `next()` once, a return without it or a
//! failure refuses with -32603, what runs after it only observes); this converts and reaches
//! the JS thread.
//!
//! The JS layer's `start(requestJson, call)` (`lib/middleware.js`) runs `fn(request, next)` and
//! reports to `call` (`NativeAroundCall`): `next(onEnded)` when `fn` calls `next()`,
//! `finish(reportJson)` when it ends. On the JS thread (a connection being fed) `start` and
//! `onEnded` are called directly, so a middleware that decides at once costs no hop and its
//! verdict is heard at once; from the runtime's threads (HTTP sessions) through the
//! middleware's one `Hop`, in order.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef};
use napi_derive::napi;
use serde_json::Value;
use toolwire::host::json_text;
use toolwire::host::{AroundCall, Finished, HostAround};
use toolwire::middleware::RequestInfo;

use crate::js_thread::Hop;

/// `(requestJson, call)`.
pub(crate) type StartArgs = FnArgs<(String, NativeAroundCall)>;

pub(crate) struct JsAround {
    start: Arc<FunctionRef<StartArgs, ()>>,
    hop: Arc<Hop>,
}

impl JsAround {
    pub(crate) fn new(env: &Env, start: &Function<'_, StartArgs, ()>) -> napi::Result<Self> {
        Ok(JsAround {
            start: Arc::new(start.create_ref()?),
            hop: Arc::new(Hop::new(env)?),
        })
    }
}

impl HostAround for JsAround {
    fn start(&self, request: &RequestInfo, call: AroundCall) {
        let request = json_text(&request.to_json());
        let start = self.start.clone();
        let native = NativeAroundCall {
            call: call.clone(),
            hop: self.hop.clone(),
        };
        let failed = call.clone();
        let hopped = self.hop.run(move |env| {
            let started = start
                .borrow_back(env)
                .and_then(|start| start.call(FnArgs::from((request, native))));
            if let Err(err) = started {
                failed.finish(Finished::Failed(format!(
                    "it could not start: {}",
                    err.reason
                )));
            }
        });
        if !hopped {
            call.finish(Finished::Failed("the JavaScript thread is gone".into()));
        }
    }
}

/// One request's way through a JavaScript middleware.
#[napi]
pub struct NativeAroundCall {
    call: AroundCall,
    hop: Arc<Hop>,
}

#[napi]
impl NativeAroundCall {
    /// The middleware called `next()`: `onEnded(endedJson)` (`{"kind", "code"?, "elapsed"}`,
    /// in seconds) is called on the JS thread once the answer is out. Throws when `next()` was
    /// called before for this request, or after the middleware had ended.
    #[napi]
    pub fn next(&self, on_ended: Function<'_, String, ()>) -> napi::Result<()> {
        let on_ended = on_ended.create_ref()?;
        let hop = self.hop.clone();
        self.call
            .next(Box::new(move |ended| {
                let ended = json_text(&ended.to_json());
                // Called where the answer was sent: on the JS thread when a connection is fed.
                hop.run(move |env| {
                    let heard = on_ended
                        .borrow_back(env)
                        .and_then(|on_ended| on_ended.call(ended));
                    if let Err(err) = heard {
                        tracing::warn!(reason = %err.reason, "a middleware's next() could not hear the end");
                    }
                });
            }))
            .map_err(|err| {
                // Worded as the JS layer words its own errors.
                let text = match err {
                    toolwire::Error::InvalidArgument(text) => text,
                    other => other.to_string(),
                };
                napi::Error::from_reason(format!("toolwire: {text}"))
            })
    }

    /// The middleware ended: `null` (it returned), or the JSON of `{"refuse": {"code",
    /// "message"}}`, `{"toolError": text}` or `{"failed": text}`.
    #[napi]
    pub fn finish(&self, report: Option<String>) {
        let report = report.map_or(Ok(Value::Null), |report| serde_json::from_str(&report));
        let report = report.unwrap_or_else(
            |err| serde_json::json!({"failed": format!("its report could not be read: {err}")}),
        );
        self.call.finish_json(&report);
    }
}
