//! MCP protocol types and the one table of per-version behaviour.

pub(crate) mod apps;
mod content;
mod implementation;
pub(crate) mod input;
mod logging;
pub(crate) mod method;
mod root;
pub(crate) mod tool;
mod trace;
mod version;

pub use apps::Visibility;
pub use content::{Content, ToolOutput};
pub use implementation::{Icon, Implementation};
pub use input::InputRequired;
pub use logging::LogLevel;
pub use root::Root;
pub use tool::{TaskSupport, Tool, ToolAnnotations};
pub use trace::TraceContext;
pub use version::ProtocolVersion;
