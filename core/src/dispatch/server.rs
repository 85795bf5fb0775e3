use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::Limiter;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, Tool};
use crate::registry::ToolRegistry;
use crate::wire::Limits;
use crate::{Error, ToolHandler};

/// Engine settings. Start from `ServerOptions::default()` and change fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Largest inbound frame in bytes (default 4 MiB).
    pub max_frame_bytes: usize,
    /// Deepest JSON nesting accepted (default 64).
    pub max_depth: usize,
    /// Tools per `tools/list` page; `None` (default) lists all in one page.
    pub page_size: Option<usize>,
    /// Tool calls that may run at once, across all sessions of this server (default 4096).
    pub max_concurrent_calls: usize,
    /// Calls that may wait for a slot, per limit, before calls are refused (default 16384).
    pub max_queued_calls: usize,
    /// Deadline for tools without their own (default: none).
    pub default_tool_timeout: Option<Duration>,
    /// How long a server→client request waits for an answer, reset by progress (default 60 s).
    pub client_request_timeout: Duration,
    /// The hard maximum for a server→client request, progress or not (default 10 min).
    pub client_request_max_timeout: Duration,
    /// On end of input, how long in-flight calls may finish before they are cancelled (default 5 s).
    pub drain_timeout: Duration,
    /// Window in which registry changes are coalesced into one `list_changed` (default 50 ms).
    pub list_changed_debounce: Duration,
    /// The log level before the client sends `logging/setLevel` (default info).
    pub default_log_level: LogLevel,
}

impl Default for ServerOptions {
    fn default() -> Self {
        let limits = Limits::default();
        ServerOptions {
            max_frame_bytes: limits.max_frame_bytes,
            max_depth: limits.max_depth,
            page_size: None,
            max_concurrent_calls: 4096,
            max_queued_calls: 16384,
            default_tool_timeout: None,
            client_request_timeout: Duration::from_secs(60),
            client_request_max_timeout: Duration::from_secs(600),
            drain_timeout: Duration::from_secs(5),
            list_changed_debounce: Duration::from_millis(50),
            default_log_level: LogLevel::Info,
        }
    }
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) options: ServerOptions,
    pub(crate) limits: Limits,
    pub(crate) registry: ToolRegistry,
    pub(crate) call_limiter: Limiter,
}

impl ServerInner {
    /// The `InitializeResult` for `version`.
    pub(crate) fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut info = json!({"name": self.info.name, "version": self.info.version});
        if version.has_titles()
            && let Some(title) = &self.info.title
        {
            info["title"] = json!(title);
        }
        if version >= ProtocolVersion::V2025_11_25 {
            if let Some(description) = &self.info.description {
                info["description"] = json!(description);
            }
            if let Some(icons) = &self.info.icons {
                info["icons"] = json!(icons);
            }
            if let Some(url) = &self.info.website_url {
                info["websiteUrl"] = json!(url);
            }
        }
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": info,
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }
}

/// An MCP server: its identity, options and tools. Cheap to clone; clones share everything.
///
/// ```no_run
/// use serde_json::{Value, json};
/// use toolwire::{Context, Server, Tool, ToolError, ToolOutput};
///
/// # async fn run() -> Result<(), toolwire::Error> {
/// let server = Server::builder("hello", "1.0.0")
///     .tool(
///         Tool::new("echo").input_schema(json!({
///             "type": "object",
///             "properties": {"text": {"type": "string"}},
///             "required": ["text"]
///         })),
///         |_ctx: Context, args: Value| async move {
///             Ok::<_, ToolError>(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
///         },
///     )
///     .build()?;
/// server.serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("version", &self.inner.info.version)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            options: ServerOptions::default(),
            tools: Vec::new(),
        }
    }

    /// Registers a tool while serving; initialized sessions get one coalesced
    /// `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<(), Error> {
        self.add_tool_arc(tool, Arc::new(handler))
    }

    /// [`add_tool`](Self::add_tool) for a handler already behind an `Arc` (as bindings hold them).
    pub fn add_tool_arc(&self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<(), Error> {
        let registry = &self.inner.registry;
        registry.insert(registry.prepare(tool, handler)?)
    }

    /// Removes a tool; `false` if there was none of that name. Calls already running finish.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.inner.registry.remove(name)
    }

    /// The names of the registered tools, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.registry.snapshot().keys().cloned().collect()
    }

    /// The options this server was built with.
    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }
}

/// Builds a [`Server`]; registration errors surface in [`build`](Self::build).
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    options: ServerOptions,
    tools: Vec<(Tool, Arc<dyn ToolHandler>)>,
}

impl ServerBuilder {
    /// Display name of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Description of the server (2025-11-25).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Usage hints for the model, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Engine options.
    pub fn options(mut self, options: ServerOptions) -> Self {
        self.options = options;
        self
    }

    /// Adds a tool.
    pub fn tool(self, tool: Tool, handler: impl ToolHandler) -> Self {
        self.tool_arc(tool, Arc::new(handler))
    }

    /// Adds a tool whose handler is already behind an `Arc`.
    pub fn tool_arc(mut self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Self {
        self.tools.push((tool, handler));
        self
    }

    /// Checks every tool and builds the server.
    pub fn build(self) -> Result<Server, Error> {
        let options = self.options;
        if options.max_concurrent_calls == 0 {
            return Err(Error::InvalidArgument(
                "max_concurrent_calls must be at least 1".into(),
            ));
        }
        if options.page_size == Some(0) {
            return Err(Error::InvalidArgument(
                "page_size must be at least 1".into(),
            ));
        }
        let registry = ToolRegistry::new(options.max_queued_calls);
        for (tool, handler) in self.tools {
            registry.insert(registry.prepare(tool, handler)?)?;
        }
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                limits: Limits {
                    max_frame_bytes: options.max_frame_bytes,
                    max_depth: options.max_depth,
                },
                call_limiter: Limiter::new(options.max_concurrent_calls, options.max_queued_calls),
                registry,
                options,
            }),
        })
    }
}
