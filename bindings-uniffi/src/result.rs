//! What a handler returns, turned into core's `ToolOutput`.

use serde_json::Value;
use toolwire::{Content, ToolError, ToolOutput};

/// A tool's result.
#[derive(Clone, Debug, uniffi::Enum)]
pub enum ToolResult {
    /// One text block.
    Text {
        /// The text.
        text: String,
    },
    /// `structuredContent` (JSON text of an object); its text is added as a block for
    /// older clients, and it is checked against the tool's output schema.
    Structured {
        /// JSON text of the structured result.
        json: String,
    },
    /// Content blocks, optionally with structured content: the whole `CallToolResult`.
    Content {
        /// The blocks, in order.
        blocks: Vec<ContentBlock>,
        /// JSON text of `structuredContent`, if any.
        #[uniffi(default = None)]
        structured_json: Option<String>,
        /// `isError`: a failure the model should see.
        #[uniffi(default = false)]
        is_error: bool,
        /// JSON text of the result's `_meta` object, if any.
        #[uniffi(default = None)]
        meta_json: Option<String>,
    },
    /// An `isError: true` result with this text, for failures the model should see.
    Error {
        /// What went wrong.
        detail: String,
    },
    /// The call itself failed (not the tool's work): the client gets a JSON-RPC error with
    /// `code` (e.g. -32603) instead of an `isError` result, and a task ends `failed`.
    ProtocolError {
        /// The JSON-RPC error code.
        code: i32,
        /// What went wrong.
        detail: String,
    },
    /// 2026-07-28: the client's input is needed first. The engine asks these questions
    /// (`{key: {method, params}}`, JSON text) and seals `request_state` for the next round,
    /// which reads the answers in `CallContext.inputResponsesJson` and `requestState`.
    InputRequired {
        /// JSON text of the questions, by key.
        #[uniffi(default = None)]
        input_requests_json: Option<String>,
        /// State for the next round.
        #[uniffi(default = None)]
        request_state: Option<String>,
    },
}

/// One content block of a result.
#[derive(Clone, Debug, uniffi::Enum)]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data_base64: String,
        /// e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data_base64: String,
        /// e.g. `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource the client may fetch.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
    },
    /// A text resource embedded in the result.
    EmbeddedText {
        /// The resource's URI.
        uri: String,
        /// Its text.
        text: String,
    },
    /// Any block, as JSON text of the wire form (e.g. with `annotations` or `_meta`).
    Json {
        /// JSON text of one content block.
        json: String,
    },
}

impl ToolResult {
    /// A malformed result is the tool's failure (an `isError` result naming the problem),
    /// never a protocol error.
    pub(crate) fn into_output(self) -> Result<ToolOutput, ToolError> {
        match self {
            ToolResult::Text { text } => Ok(ToolOutput::text(text)),
            ToolResult::Structured { json } => Ok(ToolOutput::structured(parse(
                "the structured result",
                &json,
            )?)),
            ToolResult::Content {
                blocks,
                structured_json,
                is_error,
                meta_json,
            } => {
                let content = blocks
                    .into_iter()
                    .map(ContentBlock::into_content)
                    .collect::<Result<Vec<_>, _>>()?;
                let structured = structured_json
                    .map(|json| parse("the structured result", &json))
                    .transpose()?;
                let meta = match meta_json
                    .map(|json| parse("the result's _meta", &json))
                    .transpose()?
                {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(meta)) => Some(meta),
                    Some(_) => return Err(ToolError::new("the result's _meta must be an object")),
                };
                Ok(ToolOutput {
                    content,
                    structured,
                    is_error,
                    meta,
                })
            }
            ToolResult::Error { detail } => Ok(ToolOutput::error(detail)),
            ToolResult::ProtocolError { code, detail } => Err(ToolError::protocol(code, detail)),
            ToolResult::InputRequired {
                input_requests_json,
                request_state,
            } => Err(crate::errors::ToolwireError::InputRequired {
                detail: String::new(),
                input_requests_json,
                request_state,
            }
            .into_tool_error()),
        }
    }
}

impl ContentBlock {
    pub(crate) fn into_content(self) -> Result<Content, ToolError> {
        Ok(match self {
            ContentBlock::Text { text } => Content::text(text),
            ContentBlock::Image {
                data_base64,
                mime_type,
            } => Content::image(data_base64, mime_type),
            ContentBlock::Audio {
                data_base64,
                mime_type,
            } => Content::audio(data_base64, mime_type),
            ContentBlock::ResourceLink { uri, name } => Content::resource_link(uri, name),
            ContentBlock::EmbeddedText { uri, text } => Content::embedded_text(uri, text),
            ContentBlock::Json { json } => Content::from_json(parse("a content block", &json)?)?,
        })
    }
}

fn parse(what: &str, json: &str) -> Result<Value, ToolError> {
    serde_json::from_str(json)
        .map_err(|err| ToolError::new(format!("the tool returned invalid JSON as {what}: {err}")))
}
