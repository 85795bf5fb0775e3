//! `PyMiddleware`: a Python middleware in front of every request. Core decides what the
//! request and the outcome say (`RequestInfo::to_json`, `Outcome::to_json`) and what a verdict
//! means (`Verdict::from_json`); this converts and calls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::ErrorObject;
use toolwire::middleware::{Middleware, Outcome, RequestInfo, Verdict};

use crate::convert::{to_json, to_py};

pub(crate) struct PyMiddleware {
    /// `before(request, decide)`: starts the middleware on the serving loop and returns at
    /// once; `decide(verdict)` is called when it has decided (no thread waits meanwhile).
    pub(crate) before: Arc<Py<PyAny>>,
    /// `after(outcome)`: quick (it hands the outcome to the loop), called once the answer is out.
    pub(crate) after: Arc<Py<PyAny>>,
}

/// The `decide` callable a Python middleware's `before` gets: its verdict, once.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct Decide {
    tx: Mutex<Option<oneshot::Sender<Value>>>,
}

#[pymethods]
impl Decide {
    fn __call__(&self, verdict: &Bound<'_, PyAny>) -> PyResult<()> {
        let verdict = to_json(verdict)?;
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(verdict);
        }
        Ok(())
    }
}

fn refusal(why: String) -> Verdict {
    // A rule that cannot be checked does not let the request through.
    Verdict::Refuse(ErrorObject::internal(format!("Internal error: {why}")))
}

#[async_trait]
impl Middleware for PyMiddleware {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        let (tx, rx) = oneshot::channel();
        let request = request.to_json();
        let started = Python::attach(|py| -> PyResult<()> {
            let decide = Py::new(
                py,
                Decide {
                    tx: Mutex::new(Some(tx)),
                },
            )?;
            self.before.call1(py, (to_py(py, &request)?, decide))?;
            Ok(())
        });
        if let Err(err) = started {
            return refusal(format!("a middleware could not start: {err}"));
        }
        match rx.await {
            Ok(verdict) => Verdict::from_json(&verdict)
                .unwrap_or_else(|why| refusal(format!("a middleware answered wrongly: {why}"))),
            Err(_) => refusal("a middleware never decided (its loop is gone)".into()),
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
