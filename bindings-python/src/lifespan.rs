//! The server's lifespan as core runs it (`toolwire::Lifespan`): core decides when it starts
//! and stops and keeps calls out meanwhile; the Python side (`toolwire._base.Lifespan`) enters
//! and exits the app's context manager on its loop. These carry core's start, stop and holds
//! to Python and its answers back.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use tokio::sync::oneshot;
use toolwire::host::runtime;
use toolwire::{Lifespan, LifespanFuture, LifespanHold, Server};

/// The Python object with `start(done)` and `stop(done)`, each calling `done(error=None)`
/// once it has (from any thread).
pub(crate) struct PyLifespan {
    hooks: Py<PyAny>,
}

impl PyLifespan {
    pub(crate) fn shared(hooks: Py<PyAny>) -> Arc<dyn Lifespan> {
        Arc::new(PyLifespan { hooks })
    }

    /// Calls `hooks.<method>(done)`; its `done` answers the returned receiver.
    fn ask(&self, method: &str) -> Result<oneshot::Receiver<Option<String>>, String> {
        let (tell, told) = oneshot::channel();
        let done = LifespanDone {
            tell: Mutex::new(Some(tell)),
        };
        Python::attach(|py| {
            self.hooks
                .call_method1(py, method, (done,))
                .map(drop)
                .map_err(|err| err.to_string())
        })?;
        Ok(told)
    }
}

impl Lifespan for PyLifespan {
    fn start(&self) -> LifespanFuture<Result<(), String>> {
        let asked = self.ask("start");
        Box::pin(async move {
            match asked?.await {
                Ok(None) => Ok(()),
                Ok(Some(message)) => Err(message),
                Err(_) => Err("its start was dropped before it answered".into()),
            }
        })
    }

    fn stop(&self) -> LifespanFuture<()> {
        let asked = self.ask("stop");
        Box::pin(async move {
            match asked {
                Ok(told) => {
                    if let Ok(Some(message)) = told.await {
                        tracing::error!(%message, "the server's lifespan failed to stop");
                    }
                }
                Err(message) => tracing::error!(%message, "the server's lifespan failed to stop"),
            }
        })
    }
}

/// Called once by the Python side when a start or stop has ended: `error` is why it failed.
#[pyclass(frozen)]
pub(crate) struct LifespanDone {
    tell: Mutex<Option<oneshot::Sender<Option<String>>>>,
}

#[pymethods]
impl LifespanDone {
    #[pyo3(signature = (error=None))]
    fn __call__(&self, error: Option<String>) {
        let tell = self.tell.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(tell) = tell {
            let _ = tell.send(error);
        }
    }
}

/// One serve's hold on the lifespan (`Server.hold_lifespan`).
#[pyclass(frozen)]
pub(crate) struct NativeLifespanHold {
    hold: Mutex<Option<LifespanHold>>,
}

#[pymethods]
impl NativeLifespanHold {
    /// Lets go; `done()` is called (on an engine thread) once it has: for the last hold,
    /// after the lifespan's clean-up ran. A second release only calls `done()`.
    fn release(&self, done: Py<PyAny>) {
        let hold = self.hold.lock().unwrap_or_else(|e| e.into_inner()).take();
        runtime().spawn(async move {
            if let Some(hold) = hold {
                hold.release().await;
            }
            Python::attach(|py| {
                if let Err(err) = done.call0(py) {
                    err.write_unraisable(py, None);
                }
            });
        });
    }
}

/// Holds `server`'s lifespan (started first); `done(hold, error)` is called on an engine
/// thread with the hold, or with why it failed to start.
pub(crate) fn hold(server: &Server, done: Py<PyAny>) {
    let server = server.clone();
    runtime().spawn(async move {
        let held = server.hold_lifespan().await;
        Python::attach(|py| {
            let answered = match held {
                Ok(hold) => {
                    let hold = NativeLifespanHold {
                        hold: Mutex::new(Some(hold)),
                    };
                    done.call1(py, (Some(hold), None::<String>))
                }
                Err(err) => done.call1(py, (None::<NativeLifespanHold>, Some(err.to_string()))),
            };
            if let Err(err) = answered {
                err.write_unraisable(py, None);
            }
        });
    });
}
