//! The server's lifespan on core's gate: JavaScript's start and stop (`lib/lifespan.js`) as
//! core's `Lifespan` hooks, and `NativeLifespanHold`, a serve's hold on it. When the hooks run,
//! and which calls wait for them, is core's (`toolwire::Lifespan`); this file only calls them.
//!
//! Each hook is a JS wrapper in the crate's calling convention for answers given later
//! (`settle.rs`): called with a token on the JS thread (core runs the hooks on its runtime, so
//! through a threadsafe function), it returns nothing and calls `settleJson(token, json)` when
//! its Promise settles: `{}`, or `{ "error": message }` when it rejected.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{Function, Unknown};
use napi_derive::napi;
use serde_json::Value;
use toolwire::host::JsonCallback;
use toolwire::{Lifespan, LifespanFuture, LifespanHold};

use crate::catalog::{JsJsonHandler, JsonArgs};
use crate::runtime::runtime;

/// The JS hooks, as core's `Lifespan`.
pub(crate) struct JsLifespan {
    start: Arc<JsJsonHandler>,
    stop: Arc<JsJsonHandler>,
}

impl JsLifespan {
    pub(crate) fn new(
        start: &Function<'_, JsonArgs, Unknown<'static>>,
        stop: &Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<Self> {
        Ok(JsLifespan {
            start: Arc::new(JsJsonHandler::new(start)?),
            stop: Arc::new(JsJsonHandler::new(stop)?),
        })
    }
}

/// Runs one hook to its end: `Err` carries the message of what it threw (or why it could not
/// be called: the JS thread gone).
async fn run(hook: Arc<JsJsonHandler>) -> Result<(), String> {
    match hook.call(Value::Null).await {
        Ok(answer) => match answer.get("error") {
            None => Ok(()),
            Some(Value::String(message)) => Err(message.clone()),
            Some(other) => Err(other.to_string()),
        },
        Err(err) => Err(err.message().to_owned()),
    }
}

impl Lifespan for JsLifespan {
    fn start(&self) -> LifespanFuture<Result<(), String>> {
        Box::pin(run(self.start.clone()))
    }

    fn stop(&self) -> LifespanFuture<()> {
        let hook = self.stop.clone();
        Box::pin(async move {
            // The JS layer reports a clean-up that threw itself; this is the hook not running.
            if let Err(message) = run(hook).await {
                tracing::error!(%message, "the lifespan's stop failed");
            }
        })
    }
}

/// A serve's hold on the server's lifespan (`NativeServer.holdLifespan()`). Released by
/// `release()`, or when it is garbage-collected (without waiting then).
#[napi]
pub struct NativeLifespanHold {
    hold: Arc<Mutex<Option<LifespanHold>>>,
}

impl NativeLifespanHold {
    pub(crate) fn new(hold: LifespanHold) -> Self {
        NativeLifespanHold {
            hold: Arc::new(Mutex::new(Some(hold))),
        }
    }
}

#[napi]
impl NativeLifespanHold {
    /// Lets go; when this was the last hold, resolves once the lifespan's clean-up has run
    /// (after the calls in flight). Harmless twice.
    #[napi]
    pub async fn release(&self) {
        let hold = self.hold.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(hold) = hold {
            let _ = runtime().spawn(hold.release()).await;
        }
    }
}
