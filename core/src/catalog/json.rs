//! Handlers behind one JSON call: how a binding hands a host-language function to the engine
//! for resources, prompts and completion (and, over HTTP, token checks: their
//! implementation is in `transport::http::auth`). The request and answer
//! shapes are decided here, once, for every binding.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    Completer, Completion, CompletionRequest, PromptHandler, PromptRequest, PromptResult,
    Reference, ResourceContents, ResourceHandler, ResourceRequest,
};
use crate::ToolError;

/// A host function taking one JSON request and giving one JSON answer.
///
/// An answer `{"notFound": message}` means what was asked for does not exist (a resource read
/// then answers -32002); `{"error": message}` is a failure with that message.
#[async_trait]
pub trait JsonCallback: Send + Sync + 'static {
    /// Calls the function.
    async fn call(&self, request: Value) -> Result<Value, ToolError>;
}

/// A [`JsonCallback`] as a [`ResourceHandler`], [`PromptHandler`] or [`Completer`] (and a
/// bearer-token validator over HTTP). Requests and the answers expected:
///
/// | as | request | answer |
/// |---|---|---|
/// | resource | `{"uri", "variables"}` | `{"contents": [{"uri", "text" or "blob", "mimeType"?}]}` |
/// | prompt | `{"name", "arguments"}` | `{"messages": [{"role", "content"}], "description"?}` |
/// | completer | `{"ref", "argument", "value", "context"}` | `{"values": ["..."]}` |
/// | token check | `{"token"}` | `{"subject"?, "scopes"?}`, `{"insufficientScope": "..."}`, or `null` |
pub struct ViaJson<C>(pub C);

impl<C: JsonCallback> ViaJson<C> {
    pub(crate) async fn answer(&self, request: Value) -> Result<Value, ToolError> {
        let answer = self.0.call(request).await?;
        if let Some(message) = answer.get("notFound").and_then(Value::as_str) {
            return Err(ToolError::not_found(message));
        }
        if let Some(message) = answer.get("error").and_then(Value::as_str) {
            return Err(ToolError::new(message));
        }
        Ok(answer)
    }
}

#[async_trait]
impl<C: JsonCallback> ResourceHandler for ViaJson<C> {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        let answer = self
            .answer(json!({"uri": request.uri, "variables": request.variables}))
            .await?;
        let Some(Value::Array(items)) = answer.get("contents") else {
            return Err(ToolError::new("the resource handler returned no contents"));
        };
        items
            .iter()
            .map(|item| ResourceContents::from_json(item.clone()).map_err(ToolError::new))
            .collect()
    }
}

#[async_trait]
impl<C: JsonCallback> PromptHandler for ViaJson<C> {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        let answer = self
            .answer(json!({"name": request.name, "arguments": request.arguments}))
            .await?;
        PromptResult::from_json(answer).map_err(ToolError::new)
    }
}

#[async_trait]
impl<C: JsonCallback> Completer for ViaJson<C> {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        let reference = match &request.reference {
            Reference::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            Reference::ResourceTemplate(uri) => json!({"type": "ref/resource", "uri": uri}),
        };
        let answer = self
            .answer(json!({"ref": reference, "argument": request.argument,
                "value": request.value, "context": request.context}))
            .await?;
        let values = answer
            .get("values")
            .and_then(Value::as_array)
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
