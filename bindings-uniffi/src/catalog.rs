//! Resources, prompts and completers whose code is Kotlin or Swift: records for their
//! definitions and answers, foreign traits for their code.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use toolwire::host::json_text;
use toolwire::{
    Completion, CompletionRequest, Prompt, PromptArgument, PromptMessage, PromptRequest,
    PromptResult, Resource, ResourceContents, ResourceRequest, ResourceTemplate, ToolError,
};

use crate::context::CallContext;
use crate::errors::ToolwireError;
use crate::result::ContentBlock;

/// A resource (a fixed `uri`) or a resource template (a `uri` with `{variables}`, RFC 6570:
/// `{id}` is one path segment, `{+path}` anything).
#[derive(Clone, Debug, uniffi::Record)]
pub struct ResourceDefinition {
    /// The URI, or the URI template.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// What it is.
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// Its MIME type.
    #[uniffi(default = None)]
    pub mime_type: Option<String>,
    /// Annotations (`audience`, `priority`, `lastModified`), as JSON text of an object.
    #[uniffi(default = None)]
    pub annotations_json: Option<String>,
    /// `_meta`, as JSON text of an object.
    #[uniffi(default = None)]
    pub meta_json: Option<String>,
    /// Only clients whose token holds every one of these scopes see it; to the rest it does
    /// not exist.
    #[uniffi(default = [])]
    pub required_scopes: Vec<String>,
    /// Only clients holding every one of these tags (the token validator's) see it.
    #[uniffi(default = [])]
    pub required_tags: Vec<String>,
}

/// One item of what a resource read returns: text, or bytes as base64.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ResourceContent {
    /// The URI these contents are of.
    pub uri: String,
    /// Text contents.
    #[uniffi(default = None)]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[uniffi(default = None)]
    pub blob_base64: Option<String>,
    /// Their MIME type (default: the definition's).
    #[uniffi(default = None)]
    pub mime_type: Option<String>,
}

/// Reads a resource, or any resource of a template (`variables` holds what its `{vars}`
/// matched). Throw `ToolwireError.NotFound` for a URI that does not exist (the client gets
/// -32002); any other error answers -32603 with its text.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ResourceReader: Send + Sync {
    /// The contents of `uri`. `context` is the read's, as a tool call's: progress (to the
    /// request's token), logging, cancellation (a cancelled read is not answered), the
    /// client's info. `round` is what the client sent back to an earlier round's
    /// `ToolwireError.InputRequired` (2026-07-28).
    async fn read(
        &self,
        context: Arc<CallContext>,
        uri: String,
        variables: HashMap<String, String>,
        round: Round,
    ) -> Result<Vec<ResourceContent>, ToolwireError>;
}

/// One argument of a prompt (a string).
#[derive(Clone, Debug, uniffi::Record)]
pub struct PromptArgumentDefinition {
    /// Its name.
    pub name: String,
    /// What it is for.
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// Whether `prompts/get` must carry it.
    #[uniffi(default = false)]
    pub required: bool,
    /// A display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
}

/// A prompt template.
#[derive(Clone, Debug, uniffi::Record)]
pub struct PromptDefinition {
    /// Its name.
    pub name: String,
    /// Display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// What it does.
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// Its arguments.
    #[uniffi(default = [])]
    pub arguments: Vec<PromptArgumentDefinition>,
    /// Only clients whose token holds every one of these scopes see it; to the rest it does
    /// not exist.
    #[uniffi(default = [])]
    pub required_scopes: Vec<String>,
    /// Only clients holding every one of these tags (the token validator's) see it.
    #[uniffi(default = [])]
    pub required_tags: Vec<String>,
}

/// Who says a prompt message.
#[derive(Clone, Copy, Debug, uniffi::Enum)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a rendered prompt.
#[derive(Clone, Debug, uniffi::Record)]
pub struct PromptMessageRecord {
    /// Who says it.
    pub role: PromptRole,
    /// What is said.
    pub content: ContentBlock,
}

/// A rendered prompt.
#[derive(Clone, Debug, uniffi::Record)]
pub struct PromptRendering {
    /// The messages.
    pub messages: Vec<PromptMessageRecord>,
    /// A description of this rendering.
    #[uniffi(default = None)]
    pub description: Option<String>,
}

/// Renders a prompt from its (checked) arguments.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait PromptRenderer: Send + Sync {
    /// The messages for `arguments`. `context` is the request's, as for a resource read.
    /// `round` is what the client sent back to an earlier round's
    /// `ToolwireError.InputRequired` (2026-07-28).
    async fn render(
        &self,
        context: Arc<CallContext>,
        arguments: HashMap<String, String>,
        round: Round,
    ) -> Result<PromptRendering, ToolwireError>;
}

/// Suggests values for an argument of a prompt or a variable of a resource template.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ArgumentCompleter: Send + Sync {
    /// Suggestions for `argument` whose partial value is `value`, best first; `others` holds
    /// the arguments already chosen (the request's `context.arguments`). `context` is the
    /// request's, as for a resource read.
    async fn complete(
        &self,
        context: Arc<CallContext>,
        argument: String,
        value: String,
        others: HashMap<String, String>,
    ) -> Result<Vec<String>, ToolwireError>;
}

impl ResourceDefinition {
    /// Whether this names a template, and its core definition.
    pub(crate) fn into_core(self) -> Result<Result<Resource, ResourceTemplate>, ToolwireError> {
        let mut json = serde_json::json!({
            "name": self.name,
            "requiredScopes": self.required_scopes,
            "requiredTags": self.required_tags,
        });
        let template = self.uri.contains('{');
        let uri = self.uri.clone();
        json[if template { "uriTemplate" } else { "uri" }] = self.uri.into();
        for (key, value) in [
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
        ] {
            if let Some(value) = value {
                json[key] = value.into();
            }
        }
        for (key, text) in [
            ("annotations", self.annotations_json),
            ("_meta", self.meta_json),
        ] {
            if let Some(text) = text {
                json[key] =
                    serde_json::from_str(&text).map_err(|err| ToolwireError::Registration {
                        detail: format!("the {key} of resource {uri:?} is not valid JSON: {err}"),
                    })?;
            }
        }
        if template {
            Ok(Err(ResourceTemplate::from_json(json)?))
        } else {
            Ok(Ok(Resource::from_json(json)?))
        }
    }
}

impl PromptDefinition {
    pub(crate) fn into_core(self) -> Prompt {
        let mut prompt = Prompt::new(self.name)
            .required_scopes(self.required_scopes)
            .required_tags(self.required_tags);
        prompt.title = self.title;
        prompt.description = self.description;
        for argument in self.arguments {
            let mut core = PromptArgument::new(argument.name, argument.required);
            core.title = argument.title;
            core.description = argument.description;
            prompt = prompt.argument(core);
        }
        prompt
    }
}

fn failure(err: ToolwireError) -> ToolError {
    err.into_tool_error()
}

/// The handler's `CallContext`. Core gives one to every request of a client session, the only
/// requests this binding's servers serve; a request without one is refused, not a panic.
fn call_context(ctx: Option<toolwire::Context>) -> Result<Arc<CallContext>, ToolError> {
    ctx.map(CallContext::new)
        .ok_or_else(|| ToolError::new("this request has no context (not from a client session)"))
}

/// 2026-07-28 MRTR, for prompts and resources: what the client sent back this round.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct Round {
    /// JSON text of the client's answers to an earlier round's questions, by key (`{}` if none).
    pub input_responses_json: String,
    /// The state the handler returned last round, verified by the engine.
    pub request_state: Option<String>,
}

impl Round {
    fn of(responses: &serde_json::Map<String, serde_json::Value>, state: Option<String>) -> Self {
        Round {
            input_responses_json: json_text(&serde_json::Value::Object(responses.clone())),
            request_state: state,
        }
    }
}

pub(crate) struct ForeignResource {
    pub(crate) reader: Arc<dyn ResourceReader>,
    pub(crate) mime_type: Option<String>,
}

#[async_trait::async_trait]
impl toolwire::ResourceHandler for ForeignResource {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        let context = call_context(request.ctx)?;
        let round = Round::of(&request.input_responses, request.request_state);
        let variables = request.variables.into_iter().collect();
        let contents = self
            .reader
            .read(context, request.uri, variables, round)
            .await
            .map_err(failure)?;
        contents
            .into_iter()
            .map(|c| {
                let mime = c.mime_type.or_else(|| self.mime_type.clone());
                match (c.text, c.blob_base64) {
                    (Some(text), None) => Ok(ResourceContents::text(c.uri, mime.as_deref(), text)),
                    (None, Some(blob)) => Ok(ResourceContents::blob(c.uri, mime.as_deref(), blob)),
                    _ => Err(ToolError::new(
                        "a resource content needs exactly one of text and blobBase64",
                    )),
                }
            })
            .collect()
    }
}

pub(crate) struct ForeignPrompt(pub(crate) Arc<dyn PromptRenderer>);

#[async_trait::async_trait]
impl toolwire::PromptHandler for ForeignPrompt {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        let context = call_context(request.ctx)?;
        let round = Round::of(&request.input_responses, request.request_state);
        let rendering = self
            .0
            .render(context, request.arguments.into_iter().collect(), round)
            .await
            .map_err(failure)?;
        let mut messages = Vec::with_capacity(rendering.messages.len());
        for message in rendering.messages {
            let content = message.content.into_content()?;
            messages.push(match message.role {
                PromptRole::User => PromptMessage::user(content),
                PromptRole::Assistant => PromptMessage::assistant(content),
            });
        }
        let mut result = PromptResult::new(messages);
        result.description = rendering.description;
        Ok(result)
    }
}

pub(crate) struct ForeignCompleter(pub(crate) Arc<dyn ArgumentCompleter>);

#[async_trait::async_trait]
impl toolwire::Completer for ForeignCompleter {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        let context = call_context(request.ctx)?;
        let others: BTreeMap<String, String> = request.context;
        let values = self
            .0
            .complete(
                context,
                request.argument,
                request.value,
                others.into_iter().collect(),
            )
            .await
            .map_err(failure)?;
        Ok(Completion::new(values))
    }
}

/// How `Server.toolSearch` offers a large catalog: the `pinned` tools listed as usual beside a
/// search tool and a call tool.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ToolSearch {
    /// Tools listed as usual beside the search's two.
    #[uniffi(default = [])]
    pub pinned: Vec<String>,
    /// The most tools one search returns (1 to 50).
    #[uniffi(default = 5)]
    pub max_results: u32,
    /// The search tool's name.
    #[uniffi(default = "search_tools")]
    pub search_tool_name: String,
    /// The call tool's name.
    #[uniffi(default = "call_tool")]
    pub call_tool_name: String,
}

impl From<ToolSearch> for toolwire::ToolSearch {
    fn from(search: ToolSearch) -> Self {
        toolwire::ToolSearch::new()
            .pinned(search.pinned)
            .max_results(usize::try_from(search.max_results).unwrap_or(usize::MAX))
            .search_tool_name(search.search_tool_name)
            .call_tool_name(search.call_tool_name)
    }
}
