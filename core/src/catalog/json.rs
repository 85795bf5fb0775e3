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
/// then answers "not found"); `{"error": message}` is a failure with that message;
/// `{"protocolError": {"code", "message"}}` answers the request with that JSON-RPC error;
/// `{"inputRequired": {"inputRequests"?, "requestState"?}}` (a prompt or read in the
/// 2026-07-28 era) asks the client for input first.
#[async_trait]
pub trait JsonCallback: Send + Sync + 'static {
    /// Calls the function.
    async fn call(&self, request: Value) -> Result<Value, ToolError>;

    /// Calls the function with the request's context (a resource read's, prompt's or
    /// completion's: progress, logging, cancellation, client info), for hosts whose functions
    /// take one. By default the context is not passed on.
    async fn call_with_context(
        &self,
        request: Value,
        context: Option<crate::Context>,
    ) -> Result<Value, ToolError> {
        let _ = context;
        self.call(request).await
    }
}

/// A [`JsonCallback`] as a [`ResourceHandler`], [`PromptHandler`] or [`Completer`] (and a
/// bearer-token validator over HTTP). Requests and the answers expected:
///
/// | as | request | answer |
/// |---|---|---|
/// | resource | `{"uri", "variables", "inputResponses"?, "requestState"?}` | `{"returned": value}` ([`ResourceContents::from_returned`]'s rule), or `{"contents": [{"uri", "text" or "blob", "mimeType"?}]}` |
/// | prompt | `{"name", "arguments", "inputResponses"?, "requestState"?}` | `{"returned": value}` ([`PromptResult::from_returned`]'s rule), or `{"messages": [{"role", "content"}], "description"?}` |
/// | completer | `{"ref", "argument", "value", "context"}` | `{"values": ["..."]}` |
/// | token check | `{"token"}` | `{"subject"?, "scopes"?}`, `{"insufficientScope": "..."}`, or `null` |
pub struct ViaJson<C>(pub C);

impl<C: JsonCallback> ViaJson<C> {
    pub(crate) async fn answer(
        &self,
        request: Value,
        context: Option<crate::Context>,
    ) -> Result<Value, ToolError> {
        let answer = self.0.call_with_context(request, context).await?;
        if let Some(message) = answer.get("notFound").and_then(Value::as_str) {
            return Err(ToolError::not_found(message));
        }
        if let Some(message) = answer.get("error").and_then(Value::as_str) {
            return Err(ToolError::new(message));
        }
        if let Some(failure) = answer.get("protocolError") {
            return Err(protocol_error_from_json(failure));
        }
        if let Some(asked) = answer.get("inputRequired") {
            return Err(input_required_from_json(asked)?.into());
        }
        Ok(answer)
    }
}

/// `{"code": integer, "message": string}` as a [`ToolError::protocol`]; a malformed one is an
/// internal error that says so rather than a code the host never chose.
fn protocol_error_from_json(value: &Value) -> ToolError {
    let code = value
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|code| i32::try_from(code).ok());
    let message = value.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => ToolError::protocol(code, message),
        _ => ToolError::new(
            "a \"protocolError\" answer needs an integer \"code\" and a string \"message\"",
        ),
    }
}

/// `{"inputRequests"?: {key: {method, params}}, "requestState"?: string}` as an
/// [`InputRequired`](crate::InputRequired).
pub fn input_required_from_json(value: &Value) -> Result<crate::InputRequired, ToolError> {
    let mut asked = crate::InputRequired::new();
    match value.get("inputRequests") {
        None | Some(Value::Null) => {}
        Some(Value::Object(requests)) => {
            for (key, request) in requests {
                let Some(method) = request.get("method").and_then(Value::as_str) else {
                    return Err(ToolError::new(format!(
                        "input request {key:?} has no \"method\""
                    )));
                };
                let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
                asked = asked.request(key.clone(), method, params);
            }
        }
        Some(_) => return Err(ToolError::new("\"inputRequests\" must be an object")),
    }
    match value.get("requestState") {
        None | Some(Value::Null) => {}
        Some(Value::String(state)) => asked = asked.state(state.clone()),
        Some(_) => return Err(ToolError::new("\"requestState\" must be a string")),
    }
    if asked.is_empty() {
        return Err(ToolError::new(
            "an input-required answer needs \"inputRequests\" or \"requestState\"",
        ));
    }
    Ok(asked)
}

/// The MRTR members of a request to a host function, when there are any.
fn with_round(
    mut request: Value,
    responses: &serde_json::Map<String, Value>,
    state: Option<&String>,
) -> Value {
    if !responses.is_empty() {
        request["inputResponses"] = Value::Object(responses.clone());
    }
    if let Some(state) = state {
        request["requestState"] = json!(state);
    }
    request
}

#[async_trait]
impl<C: JsonCallback> ResourceHandler for ViaJson<C> {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        let (uri, mime_type) = (request.uri.clone(), request.mime_type.clone());
        let mut answer = self
            .answer(
                with_round(
                    json!({"uri": request.uri, "variables": request.variables}),
                    &request.input_responses,
                    request.request_state.as_ref(),
                ),
                request.ctx,
            )
            .await?;
        if let Some(returned) = answer
            .as_object_mut()
            .and_then(|map| map.remove("returned"))
        {
            return ResourceContents::from_returned(&uri, returned, mime_type.as_deref())
                .map_err(ToolError::from);
        }
        let Some(Value::Array(items)) = answer.get("contents") else {
            return Err(ToolError::new("the resource handler returned no contents"));
        };
        items
            .iter()
            .map(|item| ResourceContents::from_json(item.clone()).map_err(ToolError::from))
            .collect()
    }
}

#[async_trait]
impl<C: JsonCallback> PromptHandler for ViaJson<C> {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        let mut answer = self
            .answer(
                with_round(
                    json!({"name": request.name, "arguments": request.arguments}),
                    &request.input_responses,
                    request.request_state.as_ref(),
                ),
                request.ctx,
            )
            .await?;
        if let Some(returned) = answer
            .as_object_mut()
            .and_then(|map| map.remove("returned"))
        {
            return PromptResult::from_returned(returned).map_err(ToolError::from);
        }
        PromptResult::from_json(answer).map_err(ToolError::from)
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
            .answer(
                json!({"ref": reference, "argument": request.argument,
                "value": request.value, "context": request.context}),
                request.ctx,
            )
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
