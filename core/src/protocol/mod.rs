//! MCP protocol types and the one table of per-version behaviour.

mod content;
mod implementation;
mod logging;
pub(crate) mod tool;
mod version;

pub use content::{Content, ToolOutput};
pub use implementation::{Icon, Implementation};
pub use logging::LogLevel;
pub use tool::{Tool, ToolAnnotations};
pub use version::ProtocolVersion;
