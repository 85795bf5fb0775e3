use serde::Serialize;
use serde_json::{Map, Value, json};

use super::ProtocolVersion;

/// One content block of a tool result: text, image, audio, resource link or embedded resource.
///
/// Kept as its JSON object so that `annotations`, `_meta` and fields from newer revisions
/// pass through untouched.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Content(Map<String, Value>);

impl Content {
    /// `{"type":"text","text":…}`
    pub fn text(text: impl Into<String>) -> Self {
        Self::of("text", [("text", Value::from(text.into()))])
    }

    /// `{"type":"image","data":<base64>,"mimeType":…}`
    pub fn image(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::of(
            "image",
            [
                ("data", Value::from(base64_data.into())),
                ("mimeType", Value::from(mime_type.into())),
            ],
        )
    }

    /// `{"type":"audio","data":<base64>,"mimeType":…}` (2025-03-26 and later).
    pub fn audio(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::of(
            "audio",
            [
                ("data", Value::from(base64_data.into())),
                ("mimeType", Value::from(mime_type.into())),
            ],
        )
    }

    /// `{"type":"resource_link","uri":…,"name":…}` (2025-06-18 and later).
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::of(
            "resource_link",
            [
                ("uri", Value::from(uri.into())),
                ("name", Value::from(name.into())),
            ],
        )
    }

    /// `{"type":"resource","resource":{"uri":…,"text":…}}`
    pub fn embedded_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self::of(
            "resource",
            [("resource", json!({"uri": uri.into(), "text": text.into()}))],
        )
    }

    /// Reads a content block from JSON, checking its `type` and required fields.
    pub fn from_json(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err("a content block must be an object".into());
        };
        let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
        let required: &[&str] = match kind {
            "text" => &["text"],
            "image" | "audio" => &["data", "mimeType"],
            "resource_link" => &["uri", "name"],
            "resource" => &["resource"],
            "" => return Err("a content block needs a \"type\"".into()),
            other => return Err(format!("unknown content block type {other:?}")),
        };
        if let Some(missing) = required.iter().find(|key| !map.contains_key(**key)) {
            return Err(format!("a {kind} content block needs {missing:?}"));
        }
        Ok(Content(map))
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        self.0.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The JSON object.
    pub fn as_json(&self) -> &Map<String, Value> {
        &self.0
    }

    fn of<const N: usize>(kind: &str, fields: [(&str, Value); N]) -> Self {
        let mut map = Map::with_capacity(N + 1);
        map.insert("type".into(), Value::from(kind));
        for (key, value) in fields {
            map.insert(key.into(), value);
        }
        Content(map)
    }

    /// Rewrites a block the negotiated version lacks into one it has.
    fn for_version(self, version: ProtocolVersion) -> Content {
        match self.kind() {
            "audio" if !version.has_audio() => {
                let mime = self
                    .0
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("audio");
                Content::text(format!(
                    "[{mime} audio omitted: not supported by protocol {version}]"
                ))
            }
            "resource_link" if !version.has_resource_links() => {
                let uri = self.0.get("uri").and_then(Value::as_str).unwrap_or("");
                Content::text(format!("Resource: {uri}"))
            }
            _ => self,
        }
    }
}

/// What a tool handler returns: content blocks, optional structured content, and whether it
/// is an error result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// Content blocks (may be empty; a text rendering of `structured` is added then).
    pub content: Vec<Content>,
    /// `structuredContent`, checked against the tool's `outputSchema`.
    pub structured: Option<Value>,
    /// `isError`.
    pub is_error: bool,
    /// `_meta` of the result.
    pub meta: Option<Map<String, Value>>,
}

impl ToolOutput {
    /// A single text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            ..Default::default()
        }
    }

    /// Structured content; its JSON text is added as a text block for older clients.
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            ..Default::default()
        }
    }

    /// The given blocks.
    pub fn content(content: Vec<Content>) -> Self {
        ToolOutput {
            content,
            ..Default::default()
        }
    }

    /// An `isError: true` result with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(message)],
            is_error: true,
            ..Default::default()
        }
    }

    /// Reads a `CallToolResult`-shaped object (`content`, `structuredContent`, `isError`, `_meta`).
    pub fn from_json(value: Value) -> Result<Self, String> {
        let Value::Object(mut map) = value else {
            return Err("a tool result must be an object".into());
        };
        let content = match map.remove("content") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(Content::from_json)
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("\"content\" must be an array".into()),
        };
        let is_error = match map.remove("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(_) => return Err("\"isError\" must be a boolean".into()),
        };
        let meta = match map.remove("_meta") {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(_) => return Err("\"_meta\" must be an object".into()),
        };
        Ok(ToolOutput {
            content,
            structured: map.remove("structuredContent"),
            is_error,
            meta,
        })
    }

    /// The `CallToolResult` for a client that negotiated `version`.
    pub fn into_json(self, version: ProtocolVersion) -> Value {
        let mut out = Map::new();
        let mut content: Vec<Content> = self
            .content
            .into_iter()
            .map(|c| c.for_version(version))
            .collect();
        if content.is_empty()
            && let Some(structured) = &self.structured
        {
            content.push(Content::text(structured.to_string()));
        }
        out.insert("content".into(), json!(content));
        if version.has_structured_output()
            && let Some(structured) = self.structured
        {
            out.insert("structuredContent".into(), structured);
        }
        if self.is_error {
            out.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = self.meta {
            out.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(out)
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_gets_a_text_rendering() {
        let out = ToolOutput::structured(json!({"sum": 3})).into_json(ProtocolVersion::LATEST);
        assert_eq!(
            out,
            json!({"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}})
        );
        let old = ToolOutput::structured(json!({"sum": 3})).into_json(ProtocolVersion::V2025_03_26);
        assert!(old.get("structuredContent").is_none());
    }

    #[test]
    fn content_checks() {
        assert!(Content::from_json(json!({"type":"text"})).is_err());
        assert!(Content::from_json(json!({"type":"video","x":1})).is_err());
        assert!(
            Content::from_json(json!({"type":"image","data":"AA==","mimeType":"image/png"}))
                .is_ok()
        );
        let out =
            ToolOutput::from_json(json!({"content":[{"type":"text","text":"a"}],"isError":true}))
                .unwrap();
        assert!(out.is_error);
        let link = ToolOutput::content(vec![Content::resource_link("file:///a", "a")])
            .into_json(ProtocolVersion::V2025_03_26);
        assert_eq!(link["content"][0]["type"], "text");
    }
}
