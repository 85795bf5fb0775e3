//! Resources, prompts, completers and token checks whose code is a Python function: the
//! request goes in as a dict and the answer comes back as JSON (core's `ViaJson` decides both
//! shapes; the Python layer builds the answers).

use std::sync::Arc;

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::Value;
use toolwire::host::JsonCallback;
use toolwire::{Context, ToolError};

use crate::context::NativeContext;
use crate::convert::{to_json, to_py};
use crate::handler::tool_error;
use crate::threads::{check_token_python, run_python};

/// A Python function taking one dict and returning a JSON-like value; run on the Python
/// threads, a token check on those for token checks (an `async def` is run on the serving loop
/// by the Python wrapper).
pub(crate) struct PyJsonHandler {
    pub(crate) func: Arc<Py<PyAny>>,
    /// A token check: it runs on threads of its own, never queued behind sync handlers.
    pub(crate) token_check: bool,
}

#[async_trait]
impl JsonCallback for PyJsonHandler {
    async fn call(&self, request: Value) -> Result<Value, ToolError> {
        self.call_with_context(request, None).await
    }

    /// The function gets the request and, for a resource, prompt or completion, the
    /// request's `NativeContext` (the Python layer hands a `Context` to a parameter asking).
    async fn call_with_context(
        &self,
        request: Value,
        context: Option<Context>,
    ) -> Result<Value, ToolError> {
        let func = self.func.clone();
        let work = move |py: Python<'_>| {
            let argument = to_py(py, &request).map_err(|e| tool_error(py, e))?;
            let result = match context {
                Some(ctx) => {
                    let ctx =
                        Py::new(py, NativeContext::new(ctx)).map_err(|e| tool_error(py, e))?;
                    func.call1(py, (argument, ctx))
                }
                None => func.call1(py, (argument,)),
            }
            .map_err(|e| tool_error(py, e))?;
            to_json(result.bind(py)).map_err(|e| tool_error(py, e))
        };
        let ran = if self.token_check {
            check_token_python(work).await
        } else {
            run_python(work).await
        };
        ran.unwrap_or_else(|why| Err(ToolError::new(format!("the handler failed: {why}"))))
    }
}
