//! MCP protocol types and the one table of per-version behaviour.

mod content;
mod implementation;
mod logging;
mod root;
pub(crate) mod tool;
mod version;

pub use content::{Content, ToolOutput};
pub use implementation::{Icon, Implementation};
pub use logging::LogLevel;
pub use root::Root;
pub use tool::{Tool, ToolAnnotations};
pub use version::ProtocolVersion;
