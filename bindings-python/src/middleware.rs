//! `PyAround`: a Python `async def middleware(request, call_next)` around every request. Core
//! decides what its ending means (`toolwire::host::AroundMiddleware`: `call_next` once, a return
//! without it or a failure refuses with -32603, what runs after it only observes); this
//! converts and calls.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use toolwire::host::{AroundCall, HostAround};
use toolwire::middleware::RequestInfo;

use crate::convert::{to_json, to_py};
use crate::threads::attach_kept;

/// `start(request, call)`: starts the middleware on the serving loop and returns at once; the
/// middleware reports through `call` (`next`, `finish`).
pub(crate) struct PyAround {
    pub(crate) start: Py<PyAny>,
}

impl HostAround for PyAround {
    fn start(&self, request: &RequestInfo, call: AroundCall) {
        let request = request.to_json();
        let started = attach_kept(|py| -> PyResult<()> {
            let call = Py::new(py, PyAroundCall { call: call.clone() })?;
            self.start.call1(py, (to_py(py, &request)?, call))?;
            Ok(())
        });
        if let Err(err) = started {
            call.finish(toolwire::host::Finished::Failed(format!(
                "it could not start: {err}"
            )));
        }
    }
}

/// One request's way through a Python middleware (`toolwire.host::AroundCall`).
#[pyclass(frozen, name = "AroundCall", module = "toolwire._native")]
pub(crate) struct PyAroundCall {
    call: AroundCall,
}

#[pymethods]
impl PyAroundCall {
    /// The middleware called `call_next()`: `on_end(ended)` is called (on an engine thread)
    /// with `{"kind", "code"?, "elapsed"}` once the answer is out. RuntimeError when called
    /// before for this request, or after the verdict was out.
    fn next(&self, on_end: Py<PyAny>) -> PyResult<()> {
        self.call
            .next(Box::new(move |ended| {
                let ended = ended.to_json();
                attach_kept(|py| {
                    let heard = to_py(py, &ended).and_then(|ended| on_end.call1(py, (ended,)));
                    if let Err(err) = heard {
                        tracing::warn!(%err, "a middleware's call_next() could not hear the end");
                    }
                });
            }))
            .map_err(|err| match err {
                toolwire::Error::InvalidArgument(text) => PyRuntimeError::new_err(text),
                other => PyRuntimeError::new_err(other.to_string()),
            })
    }

    /// The middleware ended: `None` (it returned), `{"refuse": {"code", "message", "data"?}}`,
    /// `{"toolError": text}` or `{"failed": text}`.
    fn finish(&self, report: &Bound<'_, PyAny>) {
        let report = to_json(report).unwrap_or_else(
            |err| serde_json::json!({"failed": format!("its report could not be read: {err}")}),
        );
        self.call.finish_json(&report);
    }

    /// Whether the client cancelled the request before the middleware decided.
    #[getter]
    fn cancelled(&self) -> bool {
        self.call.is_cancelled()
    }
}
