use std::borrow::Cow;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value, json};

use super::ProtocolVersion;
use crate::Error;
use crate::wire::{json_text, push_json_string};

/// One content block of a tool result: text, image, audio, resource link or embedded resource.
///
/// Kept as its JSON object so that `annotations`, `_meta` and fields from newer revisions
/// pass through untouched; a plain text block, the most common answer, is kept as its text
/// alone (it writes the same JSON without building an object first).
#[derive(Clone)]
pub struct Content(Repr);

#[derive(Clone)]
enum Repr {
    /// `{"type":"text","text":…}` and nothing else.
    Text(String),
    Object(Map<String, Value>),
}

impl Content {
    /// `{"type":"text","text":…}`
    pub fn text(text: impl Into<String>) -> Self {
        Content(Repr::Text(text.into()))
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
    pub fn from_json(value: Value) -> Result<Self, Error> {
        Self::read(value).map_err(|message| Error::InvalidResult {
            kind: "content block",
            message,
        })
    }

    /// [`from_json`](Self::from_json) for readers of results that hold blocks: what is wrong,
    /// which they name as theirs.
    pub(crate) fn read(value: Value) -> Result<Self, String> {
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
        Ok(Content(Repr::Object(map)))
    }

    /// The length of a plain text block's text (0 for any other block): a size hint.
    pub(crate) fn text_len(&self) -> usize {
        match &self.0 {
            Repr::Text(text) => text.len(),
            Repr::Object(_) => 0,
        }
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        match &self.0 {
            Repr::Text(_) => "text",
            Repr::Object(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The JSON object.
    pub fn as_json(&self) -> Cow<'_, Map<String, Value>> {
        match &self.0 {
            Repr::Text(text) => {
                let mut map = Map::with_capacity(2);
                map.insert("type".into(), "text".into());
                map.insert("text".into(), text.as_str().into());
                Cow::Owned(map)
            }
            Repr::Object(map) => Cow::Borrowed(map),
        }
    }

    /// A field of the JSON object.
    fn field(&self, key: &str) -> Option<&Value> {
        match &self.0 {
            Repr::Text(_) => None,
            Repr::Object(map) => map.get(key),
        }
    }

    fn of<const N: usize>(kind: &str, fields: [(&str, Value); N]) -> Self {
        let mut map = Map::with_capacity(N + 1);
        map.insert("type".into(), Value::from(kind));
        for (key, value) in fields {
            map.insert(key.into(), value);
        }
        Content(Repr::Object(map))
    }

    /// This block as a client that negotiated `version` gets it: one the version lacks is
    /// rewritten into one it has.
    fn for_version(&self, version: ProtocolVersion) -> Cow<'_, Content> {
        match self.kind() {
            "audio" if !version.has_audio() => {
                let mime = self
                    .field("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("audio");
                Cow::Owned(Content::text(format!(
                    "[{mime} audio omitted: not supported by protocol {version}]"
                )))
            }
            "resource_link" if !version.has_resource_links() => {
                let uri = self.field("uri").and_then(Value::as_str).unwrap_or("");
                Cow::Owned(Content::text(format!("Resource: {uri}")))
            }
            _ => Cow::Borrowed(self),
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            // Keys in sorted order, as the object form writes them.
            Repr::Text(text) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("text", text)?;
                map.serialize_entry("type", "text")?;
                map.end()
            }
            Repr::Object(map) => map.serialize(serializer),
        }
    }
}

/// Blocks are equal when their JSON is: a text block equals the same block read from JSON.
impl PartialEq for Content {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Text(a), Repr::Text(b)) => a == b,
            (Repr::Object(a), Repr::Object(b)) => a == b,
            _ => self.as_json() == other.as_json(),
        }
    }
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_json().fmt(f)
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

    /// What a handler's plain return value means, the one rule every binding follows:
    /// - a string is one text block; `null` is no content;
    /// - an object that is a whole `CallToolResult` (a `content` array of blocks, each an
    ///   object with a string `type`, and no keys besides `content`, `structuredContent`,
    ///   `isError` and `_meta`) is taken as that result, as the official SDKs' users write it;
    /// - any other object is structured content (with its text rendering for older clients);
    /// - any other value (number, boolean, array) is one text block of its JSON text.
    pub fn from_returned(value: Value) -> Result<Self, Error> {
        Self::read_returned(value).map_err(invalid_tool_result)
    }

    fn read_returned(value: Value) -> Result<Self, String> {
        match value {
            Value::String(text) => Ok(ToolOutput::text(text)),
            Value::Null => Ok(ToolOutput::default()),
            Value::Object(map) if is_whole_result(&map) => ToolOutput::read(Value::Object(map)),
            object @ Value::Object(_) => Ok(ToolOutput::structured(object)),
            other => Ok(ToolOutput::text(json_text(&other))),
        }
    }

    /// Reads a `CallToolResult`-shaped object (`content`, `structuredContent`, `isError`, `_meta`).
    pub fn from_json(value: Value) -> Result<Self, Error> {
        Self::read(value).map_err(invalid_tool_result)
    }

    fn read(value: Value) -> Result<Self, String> {
        let Value::Object(mut map) = value else {
            return Err("a tool result must be an object".into());
        };
        let content = match map.remove("content") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(Content::read)
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
        // Maps with string keys and JSON values always convert.
        serde_json::to_value(self.as_result(version)).unwrap_or(Value::Null)
    }

    /// Appends the bytes serialising [`as_result`](Self::as_result) gives, written by hand:
    /// text is escaped eight bytes at a time ([`push_json_string`]), and structured content
    /// without blocks is rendered to JSON once, for both its text block and
    /// `structuredContent` (serde would write it twice, once escaped). A test holds the two
    /// equal.
    pub(crate) fn write_result(
        &self,
        version: ProtocolVersion,
        out: &mut String,
    ) -> Result<(), serde_json::Error> {
        // The same members in the same order as `CallToolResult`'s `Serialize`.
        out.push('{');
        if let Some(meta) = &self.meta {
            out.push_str("\"_meta\":");
            out.push_str(&serde_json::to_string(meta)?);
            out.push(',');
        }
        out.push_str("\"content\":[");
        let shows_structured = self.version_shows_structured(version);
        let mut rendered = None;
        if self.content.is_empty()
            && let Some(structured) = &self.structured
        {
            let text = json_text(structured);
            // Room for the escaped text block (a quote takes two bytes) and, when shown,
            // `structuredContent` at once, instead of doubling up to them (a megabyte's copies).
            let halves = if shows_structured { 5 } else { 3 };
            out.reserve((text.len() / 2).saturating_mul(halves).saturating_add(64));
            write_text_block(out, &text);
            rendered = Some(text);
        } else {
            for (at, block) in self.content.iter().enumerate() {
                if at > 0 {
                    out.push(',');
                }
                match &block.for_version(version).0 {
                    Repr::Text(text) => write_text_block(out, text),
                    Repr::Object(map) => out.push_str(&serde_json::to_string(map)?),
                }
            }
        }
        out.push(']');
        if self.is_error {
            out.push_str(",\"isError\":true");
        }
        if shows_structured && let Some(structured) = &self.structured {
            out.push_str(",\"structuredContent\":");
            match rendered {
                Some(text) => out.push_str(&text),
                None => out.push_str(&serde_json::to_string(structured)?),
            }
        }
        out.push('}');
        Ok(())
    }

    /// Whether a client of `version` gets `structuredContent` (when there is one).
    fn version_shows_structured(&self, version: ProtocolVersion) -> bool {
        // Structured content that is not an object is 2026-07-28's alone: older clients get
        // its text rendering (in `content`) only.
        version.has_structured_output()
            && self.structured.as_ref().is_some_and(|structured| {
                structured.is_object() || version.has_any_structured_value()
            })
    }

    /// The `CallToolResult` for a client that negotiated `version`, serialised straight from
    /// this output: answering a call builds no JSON object first.
    pub(crate) fn as_result(&self, version: ProtocolVersion) -> CallToolResult<'_> {
        CallToolResult {
            output: self,
            version,
        }
    }
}

/// Whether an object returned by a handler is a whole `CallToolResult` (see
/// [`ToolOutput::from_returned`]).
fn is_whole_result(map: &Map<String, Value>) -> bool {
    let Some(Value::Array(blocks)) = map.get("content") else {
        return false;
    };
    let result_keys = ["content", "structuredContent", "isError", "_meta"];
    map.keys().all(|key| result_keys.contains(&key.as_str()))
        && blocks
            .iter()
            .all(|block| block.get("type").is_some_and(Value::is_string))
}

/// `{"text":…,"type":"text"}`, as a text block serialises (keys in sorted order).
fn write_text_block(out: &mut String, text: &str) {
    out.push_str("{\"text\":");
    push_json_string(out, text);
    out.push_str(",\"type\":\"text\"}");
}

/// See [`ToolOutput::as_result`].
pub(crate) struct CallToolResult<'a> {
    output: &'a ToolOutput,
    version: ProtocolVersion,
}

impl Serialize for CallToolResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let output = self.output;
        // Keys in sorted order, as a serde_json `Map` writes them: these bytes are what
        // serialising `into_json`'s value gives.
        let mut map = serializer.serialize_map(None)?;
        if let Some(meta) = &output.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.serialize_entry("content", &ContentFor(self))?;
        if output.is_error {
            map.serialize_entry("isError", &true)?;
        }
        if output.version_shows_structured(self.version)
            && let Some(structured) = &output.structured
        {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.end()
    }
}

/// The `content` array: each block for the version, or a text rendering of the structured
/// content when there are no blocks.
struct ContentFor<'a>(&'a CallToolResult<'a>);

impl Serialize for ContentFor<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let CallToolResult { output, version } = self.0;
        if output.content.is_empty()
            && let Some(structured) = &output.structured
        {
            return [Content::text(json_text(structured))].serialize(serializer);
        }
        serializer.collect_seq(
            output
                .content
                .iter()
                .map(|block| block.for_version(*version)),
        )
    }
}

fn invalid_tool_result(message: String) -> Error {
    Error::InvalidResult {
        kind: "tool result",
        message,
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
    fn a_returned_value_follows_one_rule() {
        let read = |v| ToolOutput::from_returned(v).unwrap();
        assert_eq!(read(json!("hi")), ToolOutput::text("hi"));
        assert_eq!(read(Value::Null), ToolOutput::default());
        assert_eq!(read(json!(3)), ToolOutput::text("3"));
        assert_eq!(read(json!([1, 2])), ToolOutput::text("[1,2]"));
        assert_eq!(
            read(json!({"sum": 3})),
            ToolOutput::structured(json!({"sum": 3}))
        );
        let whole = read(json!({"content": [{"type": "text", "text": "a"}], "isError": true}));
        assert_eq!(
            whole,
            ToolOutput {
                is_error: true,
                ..ToolOutput::text("a")
            }
        );
        // `content` that is data, not blocks, or beside other keys, stays structured content.
        for data in [
            json!({"content": "a letter"}),
            json!({"content": [1, 2]}),
            json!({"content": [{"kind": "x"}]}),
            json!({"content": [{"type": "text", "text": "a"}], "count": 1}),
        ] {
            assert_eq!(read(data.clone()), ToolOutput::structured(data));
        }
        // A whole result with a malformed block is an error, not silently data.
        assert!(ToolOutput::from_returned(json!({"content": [{"type": "image"}]})).is_err());
    }

    #[test]
    fn the_hand_written_result_is_what_serde_writes() {
        let mut meta = Map::new();
        meta.insert("progressToken".into(), json!("p\"1"));
        let outputs = [
            ToolOutput::default(),
            ToolOutput::text(""),
            ToolOutput::text("hello"),
            ToolOutput::text("quote\" backslash\\ lines\r\n\u{1} ünï 🦀 ".repeat(40)),
            ToolOutput::error("it \"failed\"\n"),
            ToolOutput::structured(
                json!({"items": [{"id": 1, "name": "a\"b", "tags": ["x", "\n"]}]}),
            ),
            ToolOutput::structured(json!([1, "two", null])),
            ToolOutput::structured(json!("a string")),
            ToolOutput {
                content: vec![
                    Content::text("first"),
                    Content::image("aGk=", "image/png"),
                    Content::audio("aGk=", "audio/wav"),
                    Content::resource_link("file:///a%20b", "a b"),
                    Content::embedded_text("file:///c", "c\td"),
                    Content::from_json(
                        json!({"type": "text", "text": "t", "annotations": {"priority": 1.5}}),
                    )
                    .unwrap(),
                ],
                structured: Some(json!({"sum": 3})),
                is_error: true,
                meta: Some(meta),
            },
        ];
        for output in &outputs {
            for version in ProtocolVersion::ALL {
                let mut written = String::new();
                output.write_result(version, &mut written).unwrap();
                assert_eq!(
                    written,
                    serde_json::to_string(&output.as_result(version)).unwrap(),
                    "{version}"
                );
            }
        }
    }

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
    fn a_text_block_is_its_object_form() {
        let line = "a \"quoted\" line\n";
        let text = Content::text(line);
        let object = Content::from_json(json!({"type": "text", "text": line})).unwrap();
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            serde_json::to_string(&object).unwrap()
        );
        assert_eq!(text, object);
        assert_eq!(object, text);
        assert_eq!(text.as_json().into_owned(), object.as_json().into_owned());
        assert_eq!(text.kind(), "text");
        assert_ne!(text, Content::text("another line"));
        let annotated =
            Content::from_json(json!({"type": "text", "text": line, "annotations": {}})).unwrap();
        assert_ne!(text, annotated);
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

    /// The answer path serialises `as_result` directly; its bytes must be `into_json`'s.
    #[test]
    fn direct_serialisation_matches_the_json_value() {
        let mut everything = ToolOutput::content(vec![
            Content::text("a"),
            Content::audio("AA==", "audio/wav"),
            Content::resource_link("file:///a", "a"),
            Content::image("AA==", "image/png"),
        ]);
        everything.structured = Some(json!({"z": 1, "a": [true, null]}));
        everything.is_error = true;
        everything.meta = json!({"z": 1, "a": "b"}).as_object().cloned();
        let outputs = [
            ToolOutput::text("hello"),
            ToolOutput::error("bad"),
            ToolOutput::structured(json!({"sum": 3})),
            ToolOutput::default(),
            everything,
        ];
        for version in ProtocolVersion::ALL {
            for output in &outputs {
                let direct = serde_json::to_string(&output.as_result(version)).unwrap();
                let via_value = serde_json::to_string(&output.clone().into_json(version)).unwrap();
                assert_eq!(direct, via_value, "{version}");
            }
        }
    }
}
