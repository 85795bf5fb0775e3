//! Tool definitions and server settings as records, turned into core's types.

use std::time::Duration;

use serde_json::Value;
use toolwire::{ServerOptions, Tool};

use crate::errors::ToolwireError;

/// A tool as `tools/list` shows it, plus its run-time limits.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ToolDefinition {
    /// 1 to 128 characters of `A-Z a-z 0-9 _ . -`.
    pub name: String,
    /// Display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// JSON Schema of the arguments, as JSON text (an object schema; default: any object).
    #[uniffi(default = None)]
    pub input_schema_json: Option<String>,
    /// JSON Schema of `structuredContent`, as JSON text; results are checked against it.
    #[uniffi(default = None)]
    pub output_schema_json: Option<String>,
    /// Behaviour hints for clients.
    #[uniffi(default = None)]
    pub annotations: Option<ToolAnnotations>,
    /// `_meta` of the definition, as JSON text of an object.
    #[uniffi(default = None)]
    pub meta_json: Option<String>,
    /// The call is cancelled after this many milliseconds (default: the server's).
    #[uniffi(default = None)]
    pub timeout_ms: Option<u64>,
    /// At most this many calls of this tool run at once; more wait their turn.
    #[uniffi(default = None)]
    pub max_concurrency: Option<u32>,
    /// Icons clients may show.
    #[uniffi(default = [])]
    pub icons: Vec<Icon>,
    /// Tasks extension: whether calls may run as tasks (default never). The handler does not
    /// change: inside a task `context.elicit` waits for the client's `tasks/update`.
    #[uniffi(default = None)]
    pub task_support: Option<TaskSupport>,
    /// MCP Apps: the `ui://` view (registered first with `addUiResource`) this tool links to.
    #[uniffi(default = None)]
    pub ui_resource: Option<String>,
    /// MCP Apps: who may call it (default both); `[APP]` hides it from clients that render no
    /// views.
    #[uniffi(default = None)]
    pub visibility: Option<Vec<Visibility>>,
    /// Only clients whose token holds every one of these scopes see it; to the rest it does
    /// not exist.
    #[uniffi(default = [])]
    pub required_scopes: Vec<String>,
    /// Only clients holding every one of these tags (the token validator's) see it.
    #[uniffi(default = [])]
    pub required_tags: Vec<String>,
}

/// An icon of a tool (2025-11-25).
#[derive(Clone, Debug, uniffi::Record)]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// The MIME type, e.g. `image/png`.
    #[uniffi(default = None)]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[uniffi(default = [])]
    pub sizes: Vec<String>,
    /// `"light"` or `"dark"`.
    #[uniffi(default = None)]
    pub theme: Option<String>,
}

/// Hints about a tool's behaviour. Clients treat them as untrusted.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct ToolAnnotations {
    /// Display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[uniffi(default = None)]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[uniffi(default = None)]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[uniffi(default = None)]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[uniffi(default = None)]
    pub open_world_hint: Option<bool>,
}

/// Server settings; every field has the engine's default.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct ServerConfig {
    /// Display name of the server.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// Tools per `tools/list` page (default: all in one page).
    #[uniffi(default = None)]
    pub page_size: Option<u32>,
    /// Tool calls are cancelled after this many milliseconds unless the tool says otherwise.
    #[uniffi(default = None)]
    pub default_tool_timeout_ms: Option<u64>,
    /// At most this many tool calls run at once, across all sessions of this server.
    #[uniffi(default = None)]
    pub max_concurrent_calls: Option<u32>,
    /// At most this many tool calls of one client session run at once (default 1024); its
    /// further calls wait behind it, so one client cannot take every slot.
    #[uniffi(default = None)]
    pub max_concurrent_calls_per_session: Option<u32>,
    /// At most this many tool calls of one authenticated principal (a bearer token's subject)
    /// run at once over all its sessions and requests (default 1024); its further calls wait.
    #[uniffi(default = None)]
    pub max_concurrent_calls_per_principal: Option<u32>,
    /// Bytes of answers held for a stdio client that is not reading them (default 4 MiB); past
    /// it no new request is read until the client catches up (`serveStdio`).
    #[uniffi(default = None)]
    pub max_outbound_bytes: Option<u64>,
    /// Largest inbound message in bytes (default 4 MiB).
    #[uniffi(default = None)]
    pub max_frame_bytes: Option<u64>,
    /// Deepest JSON nesting accepted (default 64).
    #[uniffi(default = None)]
    pub max_depth: Option<u32>,
    /// 2026-07-28: how long clients may cache lists, reads and `server/discover`, in ms (default 0).
    #[uniffi(default = None)]
    pub cache_ttl_ms: Option<u64>,
    /// 2026-07-28: `"private"` (default) or `"public"`.
    #[uniffi(default = None)]
    pub cache_scope: Option<String>,
    /// 2026-07-28: secrets (each ≥ 32 bytes) for the keys that seal `requestState`; the first
    /// seals. Default: one random key per process (replicas must share keys).
    #[uniffi(default = [])]
    pub request_state_keys: Vec<String>,
    /// Serve 2026-07-28 only: `initialize` is refused with -32022.
    #[uniffi(default = false)]
    pub modern_only: bool,
    /// Count requests, calls by tool, refusals, sessions and streams for `metrics()` and
    /// `metricsText()` (default true; a few atomic additions per request).
    #[uniffi(default = None)]
    pub metrics: Option<bool>,
    /// Share tasks and changes with the other replicas of this server through the Redis at
    /// this URL (`redis://[:password@]host:port/db`); default: everything stays in this
    /// process. Connects when the server is created: a Redis that cannot be reached fails
    /// there, with the reason. Give every replica the same `requestStateKeys` too.
    #[uniffi(default = None)]
    pub redis: Option<String>,
    /// Tasks extension: how long a call of a task-capable tool runs in its request before it
    /// becomes a task, in ms (default 250); one that asks the client something becomes one at once.
    #[uniffi(default = None)]
    pub task_after_ms: Option<u64>,
    /// How long a task is kept after its creation, finished or not, in ms (its `ttlMs`; default
    /// one hour). A handler still running then is cancelled.
    #[uniffi(default = None)]
    pub task_ttl_ms: Option<u64>,
    /// How long clients are told to wait between polls of a task, in ms (default 1000).
    #[uniffi(default = None)]
    pub task_poll_interval_ms: Option<u64>,
    /// Tasks kept at once, finished ones included until they expire (default 10,000); past it
    /// a call that would become a task is refused (-32603, retry later).
    #[uniffi(default = None)]
    pub max_tasks: Option<u32>,
    /// Tasks one principal (without authentication: everyone together) may hold at once
    /// (default 1,000).
    #[uniffi(default = None)]
    pub max_tasks_per_principal: Option<u32>,
}

impl ServerConfig {
    pub(crate) fn to_options(&self) -> Result<ServerOptions, toolwire::Error> {
        let mut options = ServerOptions::default();
        options.page_size = self.page_size.map(to_usize);
        options.default_tool_timeout = self.default_tool_timeout_ms.map(Duration::from_millis);
        if let Some(limit) = self.max_concurrent_calls {
            options.max_concurrent_calls = to_usize(limit);
        }
        if let Some(limit) = self.max_concurrent_calls_per_session {
            options.max_concurrent_calls_per_session = to_usize(limit);
        }
        if let Some(limit) = self.max_concurrent_calls_per_principal {
            options.max_concurrent_calls_per_principal = to_usize(limit);
        }
        if let Some(limit) = self.max_outbound_bytes {
            options.max_outbound_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
        }
        if let Some(limit) = self.max_frame_bytes {
            options.max_frame_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
        }
        if let Some(limit) = self.max_depth {
            options.max_depth = to_usize(limit);
        }
        options.metrics = self.metrics.unwrap_or(true);
        toolwire::host::ModernSettings {
            cache_ttl_ms: self.cache_ttl_ms,
            cache_scope: self.cache_scope.clone(),
            request_state_secrets: self.request_state_keys.clone(),
            modern_only: self.modern_only,
        }
        .apply(&mut options)?;
        toolwire::host::TaskSettings {
            task_after_ms: self.task_after_ms,
            task_ttl_ms: self.task_ttl_ms,
            task_poll_interval_ms: self.task_poll_interval_ms,
            max_tasks: self.max_tasks.map(to_usize),
            max_tasks_per_principal: self.max_tasks_per_principal.map(to_usize),
        }
        .apply(&mut options);
        Ok(options)
    }
}

fn to_usize(value: u32) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

impl ToolDefinition {
    pub(crate) fn to_tool(&self) -> Result<Tool, ToolwireError> {
        let mut tool = Tool::new(&self.name)
            .required_scopes(self.required_scopes.iter().cloned())
            .required_tags(self.required_tags.iter().cloned());
        if let Some(title) = &self.title {
            tool = tool.title(title);
        }
        if let Some(description) = &self.description {
            tool = tool.description(description);
        }
        if let Some(schema) = &self.input_schema_json {
            tool = tool.input_schema(parse_schema(&self.name, "inputSchema", schema)?);
        }
        if let Some(schema) = &self.output_schema_json {
            tool = tool.output_schema(parse_schema(&self.name, "outputSchema", schema)?);
        }
        if let Some(hints) = &self.annotations {
            tool = tool.annotations(toolwire::ToolAnnotations {
                title: hints.title.clone(),
                read_only_hint: hints.read_only_hint,
                destructive_hint: hints.destructive_hint,
                idempotent_hint: hints.idempotent_hint,
                open_world_hint: hints.open_world_hint,
            });
        }
        if let Some(meta) = &self.meta_json {
            match serde_json::from_str(meta) {
                Ok(Value::Object(meta)) => tool = tool.meta(meta),
                Ok(_) => {
                    return Err(ToolwireError::Registration {
                        detail: format!("the _meta of tool {:?} must be a JSON object", self.name),
                    });
                }
                Err(err) => {
                    return Err(ToolwireError::Registration {
                        detail: format!(
                            "the _meta of tool {:?} is not valid JSON: {err}",
                            self.name
                        ),
                    });
                }
            }
        }
        if !self.icons.is_empty() {
            tool = tool.icons(
                self.icons
                    .iter()
                    .map(|icon| toolwire::protocol::Icon {
                        src: icon.src.clone(),
                        mime_type: icon.mime_type.clone(),
                        sizes: (!icon.sizes.is_empty()).then(|| icon.sizes.clone()),
                        theme: icon.theme.clone(),
                    })
                    .collect(),
            );
        }
        if let Some(ms) = self.timeout_ms {
            tool = tool.timeout(Duration::from_millis(ms));
        }
        if let Some(limit) = self.max_concurrency {
            tool = tool.max_concurrency(to_usize(limit));
        }
        if let Some(support) = self.task_support {
            tool = tool.task_support(support.into());
        }
        if let Some(uri) = &self.ui_resource {
            tool = tool.ui_resource(uri);
        }
        if let Some(visibility) = &self.visibility {
            let who: Vec<toolwire::Visibility> = visibility.iter().map(|v| (*v).into()).collect();
            tool = tool.visibility(&who);
        }
        Ok(tool)
    }
}

/// Who may call a tool linked to an MCP Apps view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Visibility {
    /// The model (the host offers the tool to its agent).
    Model,
    /// The view, through the host.
    App,
}

impl From<Visibility> for toolwire::Visibility {
    fn from(who: Visibility) -> Self {
        match who {
            Visibility::Model => toolwire::Visibility::Model,
            Visibility::App => toolwire::Visibility::App,
        }
    }
}

/// An MCP Apps view: an HTML5 document served at a `ui://` URI for tools to link to.
#[derive(Clone, Debug, uniffi::Record)]
pub struct UiResourceDefinition {
    /// `ui://…`.
    pub uri: String,
    /// The view: an HTML5 document (`<!DOCTYPE html>`…).
    pub html: String,
    /// Its name (empty: the URI's last segment).
    #[uniffi(default = "")]
    pub name: String,
    /// Display name.
    #[uniffi(default = None)]
    pub title: Option<String>,
    /// What it shows.
    #[uniffi(default = None)]
    pub description: Option<String>,
    /// Its `_meta.ui` as JSON text: `csp`, `permissions`, `domain`, `prefersBorder`.
    #[uniffi(default = None)]
    pub ui_meta_json: Option<String>,
    /// `false` keeps it out of `resources/list` (still read by its URI).
    #[uniffi(default = true)]
    pub listed: bool,
    /// Only clients whose token holds every one of these scopes see and read it.
    #[uniffi(default = [])]
    pub required_scopes: Vec<String>,
    /// Only clients holding every one of these tags see and read it.
    #[uniffi(default = [])]
    pub required_tags: Vec<String>,
}

impl UiResourceDefinition {
    pub(crate) fn into_core(self) -> Result<toolwire::UiResource, ToolwireError> {
        let mut view = toolwire::UiResource::new(&self.uri, self.name, self.html)
            .required_scopes(self.required_scopes)
            .required_tags(self.required_tags);
        if let Some(title) = self.title {
            view = view.title(title);
        }
        if let Some(description) = self.description {
            view = view.description(description);
        }
        if let Some(json) = self.ui_meta_json {
            match serde_json::from_str(&json) {
                Ok(Value::Object(ui)) => view = view.ui_meta(ui),
                _ => {
                    return Err(ToolwireError::Registration {
                        detail: format!("the _meta.ui of view {} must be a JSON object", self.uri),
                    });
                }
            }
        }
        if !self.listed {
            view = view.unlisted();
        }
        Ok(view)
    }
}

/// Whether a tool may run as a task (the tasks extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum TaskSupport {
    /// Every call answers in its request.
    Never,
    /// As a task when the client declares the extension and the call runs a while or asks the
    /// client something.
    Optional,
    /// Only as a task: a client without the extension gets -32021.
    Required,
}

impl From<TaskSupport> for toolwire::TaskSupport {
    fn from(support: TaskSupport) -> Self {
        match support {
            TaskSupport::Never => toolwire::TaskSupport::Never,
            TaskSupport::Optional => toolwire::TaskSupport::Optional,
            TaskSupport::Required => toolwire::TaskSupport::Required,
        }
    }
}

/// Text that is not JSON is a registration error, worded like core's schema errors.
fn parse_schema(tool: &str, which: &str, text: &str) -> Result<Value, ToolwireError> {
    serde_json::from_str(text).map_err(|err| ToolwireError::Registration {
        detail: format!("invalid {which} of tool {tool:?}: not valid JSON: {err}"),
    })
}
