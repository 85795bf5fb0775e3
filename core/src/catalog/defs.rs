//! What resources, resource templates and prompts look like on the wire, and what their
//! handlers return.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::{Content, Error};

/// A resource with a fixed URI (`resources/list`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// Its URI (any scheme; the server must validate URIs it is handed).
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Annotations (`audience`, `priority`, `lastModified`), as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Resource {
    /// A resource `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
        }
    }

    /// From its JSON form (as bindings pass it).
    pub fn from_json(value: Value) -> Result<Self, Error> {
        serde_json::from_value(value).map_err(|err| Error::InvalidDefinition {
            kind: "resource",
            message: err.to_string(),
        })
    }

    /// Sets the display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    pub(crate) fn to_json(&self, version: ProtocolVersion) -> Value {
        listing(self, version)
    }
}

/// A family of resources named by a URI template (RFC 6570: `{var}` matches one path
/// segment, `{+var}` anything).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The template, e.g. `file:///logs/{date}.txt`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceTemplate {
    /// A template `uri_template` called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            meta: None,
        }
    }

    /// From its JSON form.
    pub fn from_json(value: Value) -> Result<Self, Error> {
        serde_json::from_value(value).map_err(|err| Error::InvalidDefinition {
            kind: "resource template",
            message: err.to_string(),
        })
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    pub(crate) fn to_json(&self, version: ProtocolVersion) -> Value {
        listing(self, version)
    }
}

/// One item of a `resources/read` result: text or base64 bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The URI these contents are of.
    pub uri: String,
    /// Their MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents of `uri`.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Binary contents of `uri`, already base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        base64: impl Into<String>,
    ) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: None,
            blob: Some(base64.into()),
            meta: None,
        }
    }

    /// From its JSON form; exactly one of `text` and `blob`.
    pub fn from_json(value: Value) -> Result<Self, String> {
        let contents: ResourceContents =
            serde_json::from_value(value).map_err(|e| format!("invalid resource contents: {e}"))?;
        if contents.text.is_some() == contents.blob.is_some() {
            return Err("resource contents need exactly one of \"text\" and \"blob\"".into());
        }
        Ok(contents)
    }
}

/// One argument a prompt takes (all prompt arguments are strings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must carry it.
    #[serde(default)]
    pub required: bool,
}

impl PromptArgument {
    /// An argument `name`, required or not.
    pub fn new(name: impl Into<String>, required: bool) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required,
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A prompt template (`prompts/list`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// A display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// A JSON Schema object whose properties are the arguments (strings): the engine checks
    /// `prompts/get` against it before the handler runs (refused: -32602 naming each argument),
    /// and an argument's `enum` completes it when no completer is set. With no `arguments`,
    /// they are read from it (name, title, description, required). Never sent to clients.
    #[serde(default, rename = "argumentsSchema", skip_serializing)]
    pub arguments_schema: Option<Value>,
}

impl Prompt {
    /// A prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            meta: None,
            arguments_schema: None,
        }
    }

    /// From its JSON form.
    pub fn from_json(value: Value) -> Result<Self, Error> {
        serde_json::from_value(value).map_err(|err| Error::InvalidDefinition {
            kind: "prompt",
            message: err.to_string(),
        })
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Checks the arguments against a JSON Schema object (see [`Prompt::arguments_schema`]).
    pub fn arguments_schema(mut self, schema: Value) -> Self {
        self.arguments_schema = Some(schema);
        self
    }

    pub(crate) fn to_json(&self, version: ProtocolVersion) -> Value {
        listing(self, version)
    }
}

/// Who says a prompt message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said (text, image, audio, a resource link or an embedded resource).
    pub content: Content,
}

impl PromptMessage {
    /// A user message with `content`.
    pub fn user(content: Content) -> Self {
        PromptMessage {
            role: Role::User,
            content,
        }
    }

    /// An assistant message with `content`.
    pub fn assistant(content: Content) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content,
        }
    }
}

/// What `prompts/get` returns.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PromptResult {
    /// A description of this rendering.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A result of `messages`.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        PromptResult {
            description: None,
            messages,
        }
    }

    /// From its JSON form (`{"description"?, "messages": [{"role", "content"}]}`).
    pub fn from_json(value: Value) -> Result<Self, String> {
        let description = value
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(Value::Array(items)) = value.get("messages") else {
            return Err("a prompt result needs a \"messages\" array".into());
        };
        let mut messages = Vec::with_capacity(items.len());
        for item in items {
            let role = match item.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                other => return Err(format!("invalid prompt message role {other:?}")),
            };
            let content = Content::from_json(item.get("content").cloned().unwrap_or(Value::Null))?;
            messages.push(PromptMessage { role, content });
        }
        Ok(PromptResult {
            description,
            messages,
        })
    }

    pub(crate) fn to_json(&self) -> Value {
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content.as_json()}))
            .collect();
        let mut result = json!({"messages": messages});
        if let Some(description) = &self.description {
            result["description"] = json!(description);
        }
        result
    }
}

/// What `completion/complete` returns: up to 100 values.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Completion {
    /// Suggested values, best first.
    pub values: Vec<String>,
    /// How many there are in all, if known.
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    pub has_more: bool,
}

impl Completion {
    /// These values (cut to the protocol's 100; `has_more` says so).
    pub fn new(mut values: Vec<String>) -> Self {
        let total = values.len();
        let has_more = total > 100;
        values.truncate(100);
        Completion {
            values,
            total: has_more.then_some(total as u64),
            has_more,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut completion = json!({"values": self.values, "hasMore": self.has_more});
        if let Some(total) = self.total {
            completion["total"] = json!(total);
        }
        json!({ "completion": completion })
    }
}

/// The JSON listing of a definition, without `title` where the version predates it.
fn listing<T: Serialize>(def: &T, version: ProtocolVersion) -> Value {
    let mut value = serde_json::to_value(def).unwrap_or(Value::Null);
    if !version.has_titles()
        && let Value::Object(map) = &mut value
    {
        map.remove("title");
    }
    value
}
