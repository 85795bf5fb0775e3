//! `PyToolHandler`: the core's `ToolHandler` for a Python function.
//!
//! Sync functions run on the runtime's blocking threads, taking the GIL only while Python
//! runs. `async def` functions run on the asyncio loop that is serving (taken per serve);
//! dropping the call (cancellation, deadline) cancels that asyncio task, which the coroutine
//! sees as `asyncio.CancelledError`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::{Context, ToolError, ToolHandler, ToolOutput};

use crate::context::NativeContext;
use crate::convert::{to_json, to_py};
use crate::runtime::runtime;

/// The asyncio loop that currently serves a server (set for the length of a serve).
pub(crate) type LoopSlot = Mutex<Option<Py<PyAny>>>;

pub(crate) struct PyToolHandler {
    pub(crate) func: Arc<Py<PyAny>>,
    pub(crate) is_async: bool,
    pub(crate) event_loop: Arc<LoopSlot>,
}

type Outcome = Result<ToolOutput, ToolError>;

#[async_trait]
impl ToolHandler for PyToolHandler {
    async fn call(&self, ctx: Context, arguments: Value) -> Outcome {
        if self.is_async {
            self.call_async(ctx, arguments).await
        } else {
            self.call_sync(ctx, arguments).await
        }
    }
}

/// A Python exception as the tool's error message (the Python layer logs the traceback).
pub(crate) fn tool_error(py: Python<'_>, err: PyErr) -> ToolError {
    let value = err.value(py);
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    if message.is_empty() {
        let kind = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        ToolError::new(kind)
    } else {
        ToolError::new(message)
    }
}

/// The Python layer returns a `CallToolResult`-shaped dict.
fn output_from_py(result: &Bound<'_, PyAny>) -> Outcome {
    let value = to_json(result).map_err(|e| tool_error(result.py(), e))?;
    ToolOutput::from_json(value)
        .map_err(|why| ToolError::new(format!("the tool returned an invalid result: {why}")))
}

fn call_args(
    py: Python<'_>,
    ctx: Context,
    arguments: &Value,
) -> PyResult<(Py<NativeContext>, Py<PyAny>)> {
    Ok((Py::new(py, NativeContext::new(ctx))?, to_py(py, arguments)?))
}

impl PyToolHandler {
    async fn call_sync(&self, ctx: Context, arguments: Value) -> Outcome {
        let func = self.func.clone();
        let joined = tokio::task::spawn_blocking(move || {
            Python::attach(|py| {
                let args = call_args(py, ctx, &arguments).map_err(|e| tool_error(py, e))?;
                let result = func.call1(py, args).map_err(|e| tool_error(py, e))?;
                output_from_py(result.bind(py))
            })
        })
        .await;
        joined.unwrap_or_else(|err| {
            Err(ToolError::new(format!(
                "the handler's thread failed: {err}"
            )))
        })
    }

    async fn call_async(&self, ctx: Context, arguments: Value) -> Outcome {
        let func = self.func.clone();
        let slot = self.event_loop.clone();
        let (done_tx, done_rx) = oneshot::channel();
        let scheduled = tokio::task::spawn_blocking(move || {
            Python::attach(|py| -> Result<Py<PyAny>, ToolError> {
                let event_loop = slot
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_ref()
                    .map(|l| l.clone_ref(py))
                    .ok_or_else(|| {
                        ToolError::new("no asyncio event loop is serving this server")
                    })?;
                let schedule = || -> PyResult<Py<PyAny>> {
                    let coroutine = func.call1(py, call_args(py, ctx, &arguments)?)?;
                    let future = py
                        .import("asyncio")?
                        .call_method1("run_coroutine_threadsafe", (coroutine, event_loop))?;
                    future.call_method1(
                        "add_done_callback",
                        (DoneCallback {
                            tx: Mutex::new(Some(done_tx)),
                        },),
                    )?;
                    Ok(future.unbind())
                };
                schedule().map_err(|e| tool_error(py, e))
            })
        })
        .await;
        let future = match scheduled {
            Ok(Ok(future)) => future,
            Ok(Err(err)) => return Err(err),
            Err(err) => {
                return Err(ToolError::new(format!(
                    "could not schedule the handler: {err}"
                )));
            }
        };
        let mut guard = CancelOnDrop(Some(future));
        let outcome = done_rx.await;
        guard.0 = None;
        outcome.unwrap_or_else(|_| Err(ToolError::new("the handler's task vanished")))
    }
}

/// Cancels the asyncio task of a call that is dropped before it finished.
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            runtime().spawn_blocking(move || {
                Python::attach(|py| {
                    let _ = future.call_method0(py, "cancel");
                })
            });
        }
    }
}

/// Receives the finished asyncio task on the loop's thread and hands its result to Rust.
#[pyclass]
struct DoneCallback {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
}

#[pymethods]
impl DoneCallback {
    fn __call__(&self, future: &Bound<'_, PyAny>) {
        let py = future.py();
        let outcome = match future.call_method0("result") {
            Ok(result) => output_from_py(&result),
            Err(err) => Err(tool_error(py, err)),
        };
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }
}
