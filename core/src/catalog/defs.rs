//! What resources, resource templates and prompts look like on the wire, and what their
//! handlers return.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::wire::json_text;
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
    /// Scopes a viewer's token must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_scopes: Vec<String>,
    /// Tags a viewer must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_tags: Vec<String>,
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
            required_scopes: Vec::new(),
            required_tags: Vec::new(),
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
    /// Scopes a viewer's token must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_scopes: Vec<String>,
    /// Tags a viewer must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_tags: Vec<String>,
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
            required_scopes: Vec::new(),
            required_tags: Vec::new(),
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

    /// What a resource function's plain return value means, the one rule every binding follows
    /// (as [`ToolOutput::from_returned`](crate::ToolOutput::from_returned) is for tools). The
    /// host has already made its bytes `{"blob": base64}` and its content objects JSON:
    /// - a string is text contents of `uri`;
    /// - an object with `text` or `blob` (exactly one) is one contents item: `uri` defaults to
    ///   the URI read, `mimeType` (or `mime_type`) to `mime_type`, the MIME type the resource
    ///   was registered with; `_meta` is kept;
    /// - an array is one item per element, each by the two rules above;
    /// - anything else (`null`, a number, a boolean, any other object) is refused, saying what
    ///   to return.
    pub fn from_returned(
        uri: &str,
        value: Value,
        mime_type: Option<&str>,
    ) -> Result<Vec<Self>, Error> {
        let items = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        items
            .into_iter()
            .map(|item| Self::item_from_returned(uri, item, mime_type))
            .collect::<Result<_, _>>()
            .map_err(invalid_contents)
    }

    fn item_from_returned(uri: &str, item: Value, mime_type: Option<&str>) -> Result<Self, String> {
        let mut map = match item {
            Value::String(text) => return Ok(ResourceContents::text(uri, mime_type, text)),
            Value::Object(map) if map.contains_key("text") || map.contains_key("blob") => map,
            other => {
                return Err(format!(
                    "a resource handler returned {}; return text, bytes, an object with \
                     \"text\" or \"blob\", or a list of them",
                    kind_of(&other)
                ));
            }
        };
        if let Some(spelled) = map.remove("mime_type") {
            map.entry("mimeType").or_insert(spelled);
        }
        map.entry("uri").or_insert_with(|| json!(uri));
        if let Some(mime_type) = mime_type {
            map.entry("mimeType").or_insert_with(|| json!(mime_type));
        }
        Self::read(Value::Object(map))
    }

    /// From its JSON form; exactly one of `text` and `blob`.
    pub fn from_json(value: Value) -> Result<Self, Error> {
        Self::read(value).map_err(invalid_contents)
    }

    fn read(value: Value) -> Result<Self, String> {
        let contents: ResourceContents =
            serde_json::from_value(value).map_err(|e| e.to_string())?;
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
    /// Scopes a viewer's token must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_scopes: Vec<String>,
    /// Tags a viewer must all hold to see it (toolwire's own; never sent).
    #[serde(default, skip_serializing)]
    pub required_tags: Vec<String>,
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
            required_scopes: Vec::new(),
            required_tags: Vec::new(),
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

    /// What a prompt function's plain return value means, the one rule every binding follows.
    /// The host has already made its content objects JSON:
    /// - an object with a `messages` array is the result: each element a message by the rules
    ///   below, `description` kept;
    /// - an array is the messages, one per element;
    /// - anything else is the one message.
    ///
    /// A message is a string (a user's text), an object with `role` (`user` or `assistant`)
    /// and `content` (a string is a text block, otherwise a content block), or a content block
    /// alone (an object with a string `type`: the user's).
    pub fn from_returned(value: Value) -> Result<Self, Error> {
        Self::read_returned(value).map_err(invalid_prompt_result)
    }

    fn read_returned(value: Value) -> Result<Self, String> {
        let (description, items) = match value {
            Value::Object(mut map) if matches!(map.get("messages"), Some(Value::Array(_))) => {
                let description = match map.remove("description") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(text)) => Some(text),
                    Some(_) => return Err("a prompt's \"description\" must be a string".into()),
                };
                let Some(Value::Array(items)) = map.remove("messages") else {
                    return Err("a prompt result needs a \"messages\" array".into());
                };
                (description, items)
            }
            Value::Array(items) => (None, items),
            one => (None, vec![one]),
        };
        let messages = items
            .into_iter()
            .map(message_from_returned)
            .collect::<Result<_, _>>()?;
        Ok(PromptResult {
            description,
            messages,
        })
    }

    /// From its JSON form (`{"description"?, "messages": [{"role", "content"}]}`).
    pub fn from_json(value: Value) -> Result<Self, Error> {
        Self::read(value).map_err(invalid_prompt_result)
    }

    fn read(value: Value) -> Result<Self, String> {
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
            let content = Content::read(item.get("content").cloned().unwrap_or(Value::Null))?;
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

/// One prompt message by [`PromptResult::from_returned`]'s rule.
fn message_from_returned(item: Value) -> Result<PromptMessage, String> {
    match item {
        Value::String(text) => Ok(PromptMessage::user(Content::text(text))),
        Value::Object(mut map) if map.contains_key("role") => {
            let role = match map.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => {
                    return Err(format!(
                        "a prompt message's \"role\" must be \"user\" or \"assistant\", not {}",
                        map.get("role").map_or_else(|| "null".into(), json_text)
                    ));
                }
            };
            let content = match map.remove("content") {
                Some(Value::String(text)) => Content::text(text),
                Some(block) => Content::read(block)?,
                None => return Err("a prompt message needs \"content\"".into()),
            };
            Ok(PromptMessage { role, content })
        }
        Value::Object(map) if matches!(map.get("type"), Some(Value::String(_))) => {
            Ok(PromptMessage::user(Content::read(Value::Object(map))?))
        }
        other => Err(format!(
            "a prompt message cannot be {}; return text, a content block or an object with \
             \"role\" and \"content\"",
            kind_of(&other)
        )),
    }
}

fn invalid_contents(message: String) -> Error {
    Error::InvalidResult {
        kind: "resource contents",
        message,
    }
}

fn invalid_prompt_result(message: String) -> Error {
    Error::InvalidResult {
        kind: "prompt result",
        message,
    }
}

/// How a refusal names the JSON value a host function returned.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list inside a list",
        Value::Object(_) => "an object without the keys that say what it is",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(value: Value, mime_type: Option<&str>) -> Result<Value, String> {
        ResourceContents::from_returned("memo://a", value, mime_type)
            .map(|c| json!(c))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_returned_resource_value_is_read_by_one_rule() {
        assert_eq!(
            contents(json!("hi"), Some("text/plain")),
            Ok(json!([{"uri": "memo://a", "mimeType": "text/plain", "text": "hi"}]))
        );
        // The host's bytes arrive as {"blob"}; its own keys win over the defaults.
        assert_eq!(
            contents(
                json!([{"blob": "AAE="}, {"text": "t", "uri": "memo://b", "mime_type": "a/b"}]),
                Some("text/plain")
            ),
            Ok(json!([
                {"uri": "memo://a", "mimeType": "text/plain", "blob": "AAE="},
                {"uri": "memo://b", "mimeType": "a/b", "text": "t"}
            ]))
        );
        assert_eq!(
            contents(json!({"text": "t", "_meta": {"k": 1}}), None),
            Ok(json!([{"uri": "memo://a", "text": "t", "_meta": {"k": 1}}]))
        );
    }

    #[test]
    fn a_returned_resource_value_that_says_nothing_is_refused_saying_what_to_return() {
        for (value, named) in [
            (json!(null), "nothing"),
            (json!(3), "a number"),
            (json!({"x": 1}), "an object without"),
            (json!([["nested"]]), "a list inside a list"),
        ] {
            let why = contents(value, None).expect_err("refused");
            assert!(
                why.contains(named) && why.contains("return text, bytes"),
                "{why}"
            );
        }
        let both = contents(json!({"text": "t", "blob": "AA=="}), None).expect_err("refused");
        assert!(both.contains("exactly one"), "{both}");
    }

    #[test]
    fn a_returned_prompt_value_is_read_by_one_rule() {
        let text = |t: &str| Content::text(t);
        assert_eq!(
            PromptResult::from_returned(json!("hello")).ok(),
            Some(PromptResult::new(vec![PromptMessage::user(text("hello"))]))
        );
        assert_eq!(
            PromptResult::from_returned(json!([
                "one",
                {"role": "assistant", "content": "two"},
                {"type": "text", "text": "three"},
                {"role": "user", "content": {"type": "text", "text": "four"}}
            ]))
            .ok(),
            Some(PromptResult::new(vec![
                PromptMessage::user(text("one")),
                PromptMessage::assistant(text("two")),
                PromptMessage::user(text("three")),
                PromptMessage::user(text("four")),
            ]))
        );
        let described = PromptResult::from_returned(json!({
            "description": "d", "messages": ["m"]
        }))
        .expect("read");
        assert_eq!(described.description.as_deref(), Some("d"));
        assert_eq!(described.messages, vec![PromptMessage::user(text("m"))]);
    }

    #[test]
    fn a_returned_prompt_value_that_says_nothing_is_refused() {
        for (value, named) in [
            (json!(7), "cannot be a number"),
            (json!([null]), "cannot be nothing"),
            (
                json!({"role": "system", "content": "x"}),
                "\"user\" or \"assistant\"",
            ),
            (json!({"role": "user"}), "needs \"content\""),
            (
                json!({"messages": [], "description": 1}),
                "must be a string",
            ),
        ] {
            let why = PromptResult::from_returned(value)
                .expect_err("refused")
                .to_string();
            assert!(why.contains(named), "{why}");
        }
    }
}
