//! `PyToolHandler`: the core's `ToolHandler` for a Python function.
//!
//! Sync functions run on the Python threads (`threads.rs`), taking the GIL only while Python
//! runs; one registered with `run_in_thread=False` runs where its call is polled, without that
//! hop: on the app's loop thread when a mounted request is answered in place, on the caller's
//! for a session of its own, else on the engine's thread (it must not block: nothing else runs
//! there meanwhile). `async def` functions run as tasks on the asyncio loop that is serving (taken per
//! serve) through its [`LoopBridge`](crate::bridge::LoopBridge); dropping the call
//! (cancellation, deadline) cancels that task, which the coroutine sees as
//! `asyncio.CancelledError`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::Value;
use toolwire::host::input_required_from_json;
use toolwire::{Context, ToolError, ToolHandler, ToolOutput};

use crate::bridge::BridgeHandle;
use crate::context::NativeContext;
use crate::convert::{to_json, to_py};
use crate::threads::{attach_kept, run_python};

/// The bridge to the asyncio loop that currently serves a server (set for the length of a serve).
pub(crate) type BridgeSlot = Mutex<Option<BridgeHandle>>;

pub(crate) struct PyToolHandler {
    pub(crate) func: Arc<Py<PyAny>>,
    pub(crate) is_async: bool,
    /// A sync function runs on the Python threads (else where its call is polled).
    pub(crate) in_thread: bool,
    pub(crate) bridge: Arc<BridgeSlot>,
}

use crate::bridge::Outcome;

#[async_trait]
impl ToolHandler for PyToolHandler {
    async fn call(&self, ctx: Context, arguments: Value) -> Outcome {
        if self.is_async {
            self.call_async(ctx, arguments).await
        } else if self.in_thread {
            self.call_sync(ctx, arguments).await
        } else {
            // No hop: a quick function costs the GIL's taking, not two thread wake-ups.
            attach_kept(|py| call_now(py, &self.func, ctx, &arguments))
        }
    }
}

/// A Python exception as the tool's error message (the Python layer logs the traceback).
pub(crate) fn tool_error(py: Python<'_>, err: PyErr) -> ToolError {
    let value = err.value(py);
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    // toolwire.ProtocolError: a JSON-RPC error rather than an `isError` result.
    if value
        .hasattr("__toolwire_protocol_error__")
        .unwrap_or(false)
        && let Some(code) = value
            .getattr("code")
            .ok()
            .and_then(|code| code.extract::<i32>().ok())
    {
        return ToolError::protocol(code, message);
    }
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

/// What the Python layer hands back: a `ToolResult` or content blocks already turned into a
/// `CallToolResult` dict, any other value as plain JSON data. Core's one rule
/// ([`ToolOutput::from_returned`]) decides what it means, as in every language.
pub(crate) fn output_from_py(result: &Bound<'_, PyAny>) -> Outcome {
    if let Ok(asked) = result.cast::<InputRequiredAnswer>() {
        return Err(input_required_from_json(&asked.get().value)?.into());
    }
    let value = to_json(result).map_err(|e| tool_error(result.py(), e))?;
    // "invalid tool result: …", what is wrong and what to return.
    ToolOutput::from_returned(value).map_err(ToolError::from)
}

/// A tool's `InputRequired` as the Python layer hands it over: its JSON
/// (`{"inputRequests"?, "requestState"?}`), kept apart from data a tool may return.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct InputRequiredAnswer {
    value: Value,
}

#[pymethods]
impl InputRequiredAnswer {
    #[new]
    fn new(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(InputRequiredAnswer {
            value: to_json(value)?,
        })
    }
}

fn call_args(
    py: Python<'_>,
    ctx: Context,
    arguments: &Value,
) -> PyResult<(Py<NativeContext>, Py<PyAny>)> {
    Ok((Py::new(py, NativeContext::new(ctx))?, to_py(py, arguments)?))
}

/// Calls a sync tool function here, on this thread.
fn call_now(py: Python<'_>, func: &Py<PyAny>, ctx: Context, arguments: &Value) -> Outcome {
    let args = call_args(py, ctx, arguments).map_err(|e| tool_error(py, e))?;
    let result = func.call1(py, args).map_err(|e| tool_error(py, e))?;
    output_from_py(result.bind(py))
}

impl PyToolHandler {
    async fn call_sync(&self, ctx: Context, arguments: Value) -> Outcome {
        let func = self.func.clone();
        run_python(move |py| call_now(py, &func, ctx, &arguments))
            .await
            .unwrap_or_else(|why| Err(ToolError::new(format!("the handler failed: {why}"))))
    }

    async fn call_async(&self, ctx: Context, arguments: Value) -> Outcome {
        let bridge = self
            .bridge
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| ToolError::new("no asyncio event loop is serving this server"))?;
        bridge.run(self.func.clone(), ctx, arguments).await
    }
}
