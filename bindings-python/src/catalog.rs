//! Resources, prompts and completers whose code is a Python function: the request goes in as
//! a dict, the answer comes back as the wire form (the Python layer shapes both).

use std::sync::Arc;

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::{Value, json};
use toolwire::{
    Completer, Completion, CompletionRequest, PromptHandler, PromptRequest, PromptResult,
    Reference, ResourceContents, ResourceHandler, ResourceRequest, ToolError,
};

use crate::convert::{to_json, to_py};
use crate::handler::tool_error;

/// A Python function taking one dict and returning a JSON-like value; run on the runtime's
/// blocking threads (an `async def` is run on the serving loop by the Python wrapper).
pub(crate) struct PyJsonHandler {
    pub(crate) func: Arc<Py<PyAny>>,
}

impl PyJsonHandler {
    async fn call(&self, request: Value) -> Result<Value, ToolError> {
        let func = self.func.clone();
        let joined = tokio::task::spawn_blocking(move || {
            Python::attach(|py| {
                let argument = to_py(py, &request).map_err(|e| tool_error(py, e))?;
                let result = func.call1(py, (argument,)).map_err(|e| tool_error(py, e))?;
                to_json(result.bind(py)).map_err(|e| tool_error(py, e))
            })
        })
        .await;
        let value = joined.unwrap_or_else(|err| {
            Err(ToolError::new(format!(
                "the handler's thread failed: {err}"
            )))
        })?;
        // The wrapper reports "no such resource" as {"notFound": message}.
        if let Some(message) = value.get("notFound").and_then(Value::as_str) {
            return Err(ToolError::not_found(message));
        }
        Ok(value)
    }
}

#[async_trait]
impl ResourceHandler for PyJsonHandler {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        let value = self
            .call(json!({"uri": request.uri, "variables": request.variables}))
            .await?;
        let Value::Array(items) = value else {
            return Err(ToolError::new(
                "the resource handler returned no list of contents",
            ));
        };
        items
            .into_iter()
            .map(|item| ResourceContents::from_json(item).map_err(ToolError::new))
            .collect()
    }
}

#[async_trait]
impl PromptHandler for PyJsonHandler {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        let value = self
            .call(json!({"name": request.name, "arguments": request.arguments}))
            .await?;
        PromptResult::from_json(value).map_err(ToolError::new)
    }
}

#[async_trait]
impl Completer for PyJsonHandler {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        let reference = match &request.reference {
            Reference::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            Reference::ResourceTemplate(uri) => json!({"type": "ref/resource", "uri": uri}),
        };
        let value = self
            .call(json!({"ref": reference, "argument": request.argument,
                "value": request.value, "context": request.context}))
            .await?;
        let values = value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| ToolError::new("a completer must return a list of strings"))?;
        Ok(Completion::new(values))
    }
}
