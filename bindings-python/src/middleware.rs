//! `PyMiddleware`: a Python middleware in front of every request. Core decides what the
//! request and the outcome say (`RequestInfo::to_json`, `Outcome::to_json`) and what a verdict
//! means (`Verdict::from_json`); this converts and calls.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use pyo3::prelude::*;
use toolwire::host::JsonCallback;
use toolwire::{ErrorObject, Middleware, Outcome, RequestInfo, Verdict};

use crate::catalog::PyJsonHandler;
use crate::convert::to_py;

pub(crate) struct PyMiddleware {
    /// `before(request) -> verdict`, on the Python threads (a coroutine runs on the loop).
    pub(crate) before: PyJsonHandler,
    /// `after(outcome)`: quick, called where the answer is sent.
    pub(crate) after: Arc<Py<PyAny>>,
}

#[async_trait]
impl Middleware for PyMiddleware {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        // A middleware that fails or answers wrongly refuses: a rule that cannot be checked
        // does not let the request through.
        match self.before.call(request.to_json()).await {
            Ok(verdict) => Verdict::from_json(&verdict).unwrap_or_else(|why| {
                Verdict::Refuse(ErrorObject::internal(format!(
                    "Internal error: a middleware answered wrongly: {why}"
                )))
            }),
            Err(err) => Verdict::Refuse(ErrorObject::internal(format!(
                "Internal error: a middleware failed: {}",
                err.message()
            ))),
        }
    }

    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        let mut heard = outcome.to_json();
        heard["elapsed"] = serde_json::json!(elapsed.as_secs_f64());
        heard["sequence"] = serde_json::json!(request.sequence);
        Python::attach(|py| {
            let called = to_py(py, &heard).and_then(|heard| self.after.call1(py, (heard,)));
            if let Err(err) = called {
                tracing::warn!(%err, "a middleware's after hook failed");
            }
        });
    }
}
