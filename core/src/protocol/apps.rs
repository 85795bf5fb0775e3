//! MCP Apps' protocol names (`io.modelcontextprotocol/ui`): the extension, the MIME type of a
//! view, who may call a linked tool, and whether a client renders views. Served by `crate::apps`.

use serde_json::Value;

/// The extension's identifier, in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of a view, exactly as hosts compare it.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Who may call a tool linked to an MCP Apps view (`_meta.ui.visibility`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// The model (the host offers the tool to its agent).
    Model,
    /// The view, through the host.
    App,
}

impl Visibility {
    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Model => "model",
            Visibility::App => "app",
        }
    }
}

/// Whether a client's capabilities say it renders views (the extension, with the MIME type).
pub(crate) fn renders(client_capabilities: &Value) -> bool {
    client_capabilities
        .pointer("/extensions/io.modelcontextprotocol~1ui/mimeTypes")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}
