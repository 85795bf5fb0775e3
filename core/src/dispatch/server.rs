use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::middleware::Middleware;
use super::modern::{CacheScope, Listeners, ModernStamp, Sealer, StateKeys};
use crate::catalog::{
    Catalog, Completer, Prompt, PromptHandler, Reference, Resource, ResourceHandler,
    ResourceTemplate,
};
use crate::changes::{ChangeBus, LocalChangeBus};
use crate::limiter::{Limiter, PrincipalLimiters};
use crate::metrics::{Gauges, Metrics};
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, Tool};
use crate::registry::ToolRegistry;
use crate::tasks::{MemoryTaskStore, TaskSettings, TaskStore, Tasks};
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
    /// Tool calls of one session that may run at once (default 1024). A session past it waits
    /// behind its own limit, holding none of the server's slots: one greedy session takes at
    /// most this many of [`max_concurrent_calls`](Self::max_concurrent_calls) while others are
    /// served. Its waiting calls count against `max_queued_calls` with everyone's. A stateless
    /// HTTP or 2026-07-28 exchange is a session of one request: this limit does not reach it,
    /// [`max_concurrent_calls_per_principal`](Self::max_concurrent_calls_per_principal) does.
    pub max_concurrent_calls_per_session: usize,
    /// Tool calls of one authenticated principal (an HTTP bearer token's subject) that may run
    /// at once, over all its sessions and stateless requests together (default 1024). Past it
    /// the principal's calls wait behind its own limit, as a session's do, so one token holder
    /// cannot take the server's slots however many sessions it opens. Calls without a
    /// principal are not under it.
    pub max_concurrent_calls_per_principal: usize,
    /// Calls that may wait for a slot before calls are refused (default 16384): one bound for
    /// the server's queue and every session's together, and one for each tool with a limit.
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
    /// The longest a byte-stream transport (stdio) keeps looking for the client's next frame
    /// before it lets the runtime sleep (default 200 µs, KVM's halt-polling ceiling; zero:
    /// never). Within it the window adapts to the client's pace: a client that calls now and
    /// then costs nothing, one in a tight loop at most this much CPU per request, and is
    /// spared a sleep and wake-up per request.
    pub idle_poll: Duration,
    /// Bytes of answers and notifications [`Server::serve`] (stdio, a transport of your own)
    /// may hold for a client that is not reading them (default 4 MiB). Past it the server reads no
    /// new requests until the client has taken them down to half; calls in flight go on,
    /// and every request read is answered.
    pub max_outbound_bytes: usize,
    /// 2026-07-28: how long a client may cache `server/discover`, the lists and reads, in
    /// milliseconds (default 0: re-fetch each time).
    pub cache_ttl_ms: u64,
    /// 2026-07-28: who may share those cached answers (default private).
    pub cache_scope: CacheScope,
    /// 2026-07-28: the keys that seal `requestState` between MRTR rounds. `None` (default): one
    /// random key for this process, so a round must come back to the same process before it
    /// restarts; replicas share keys through [`StateKeys::from_secrets`].
    pub request_state_keys: Option<StateKeys>,
    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub request_state_ttl: Duration,
    /// The largest sealed `requestState`, in bytes, made or accepted (default 64 KiB).
    pub max_request_state_bytes: usize,
    /// Serve 2026-07-28 only: `initialize` is refused with -32022 naming the versions spoken
    /// (default false: both eras).
    pub modern_only: bool,
    /// `subscriptions/listen` streams open at once across the server (default 1024); more are
    /// refused.
    pub max_listen_streams: usize,
    /// Over HTTP: frames a 2026-07-28 answer stream (a listen stream above all) may have waiting
    /// for a slow client before it is ended (default 256). On stdio and other duplex transports
    /// the session's one outbound queue carries everything, as in the legacy era.
    pub listen_backlog: usize,
    /// Tasks extension: how long a call of a task-capable tool may run in its request before
    /// it becomes a task (default 250 ms). A handler that asks the client something becomes
    /// one at once; one that answers sooner answers in its request.
    pub task_after: Duration,
    /// How long a task is kept after its creation, finished or not (its `ttlMs`; default one
    /// hour). A handler still running then is cancelled.
    pub task_ttl: Duration,
    /// How often clients are told to poll a task (`pollIntervalMs`; default 1 s).
    pub task_poll_interval: Duration,
    /// Tasks kept at once, finished ones included until they expire (default 10,000); past
    /// it, a call that would become a task is refused with -32603 (retry later).
    pub max_tasks: usize,
    /// Tasks one principal (or, without authentication, everyone together) may hold at once
    /// (default 1,000).
    pub max_tasks_per_principal: usize,
    /// Count requests, calls by tool, refusals by limit, sessions and streams for
    /// [`Server::metrics`] and [`Server::metrics_text`] (default true; a few atomic additions
    /// per request).
    pub metrics: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        let limits = Limits::default();
        ServerOptions {
            max_frame_bytes: limits.max_frame_bytes,
            max_depth: limits.max_depth,
            page_size: None,
            max_concurrent_calls: 4096,
            max_concurrent_calls_per_session: 1024,
            max_concurrent_calls_per_principal: 1024,
            max_queued_calls: 16384,
            default_tool_timeout: None,
            client_request_timeout: Duration::from_secs(60),
            client_request_max_timeout: Duration::from_secs(600),
            drain_timeout: Duration::from_secs(5),
            list_changed_debounce: Duration::from_millis(50),
            default_log_level: LogLevel::Info,
            idle_poll: Duration::from_micros(200),
            max_outbound_bytes: 4 << 20,
            cache_ttl_ms: 0,
            cache_scope: CacheScope::Private,
            request_state_keys: None,
            request_state_ttl: Duration::from_secs(600),
            max_request_state_bytes: 64 * 1024,
            modern_only: false,
            max_listen_streams: 1024,
            listen_backlog: 256,
            task_after: Duration::from_millis(250),
            task_ttl: Duration::from_secs(3600),
            task_poll_interval: Duration::from_secs(1),
            max_tasks: 10_000,
            max_tasks_per_principal: 1_000,
            metrics: true,
        }
    }
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) options: ServerOptions,
    pub(crate) limits: Limits,
    pub(crate) registry: ToolRegistry,
    pub(crate) catalog: Catalog,
    pub(crate) call_limiter: Limiter,
    /// Each authenticated principal's share of the call slots.
    pub(crate) principal_limiters: PrincipalLimiters,
    /// Calls waiting for a slot, in the server's queue and in every session's: one bound
    /// (`max_queued_calls`) for all of them.
    pub(crate) queued_calls: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) modern_stamp: Arc<ModernStamp>,
    pub(crate) sealer: Sealer,
    pub(crate) listeners: Arc<Listeners>,
    /// Where list changes and resource updates travel to sessions and listen streams.
    pub(crate) changes: Arc<dyn ChangeBus>,
    /// Tool calls that outlive their request (the tasks extension).
    pub(crate) tasks: Arc<Tasks>,
    /// Legacy SSE events and session records shared with other replicas: Streamable HTTP
    /// uses it instead of its own `event_store`.
    #[cfg(feature = "http")]
    pub(crate) event_store: Option<Arc<dyn crate::events::EventStore>>,
    /// The host's rules in front of every request.
    pub(crate) middleware: super::middleware::Chain,
    pub(crate) metrics: Arc<Metrics>,
}

impl ServerInner {
    /// The server's identity as `version` shows it.
    pub(crate) fn server_info(&self, version: ProtocolVersion) -> Value {
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
        info
    }

    /// The capabilities, following what is registered now.
    pub(crate) fn capabilities(&self, version: ProtocolVersion) -> Value {
        let mut capabilities = json!({"tools": {"listChanged": true}, "logging": {}});
        if self.catalog.has_resources() {
            capabilities["resources"] = json!({"subscribe": true, "listChanged": true});
        }
        if self.catalog.has_prompts() {
            capabilities["prompts"] = json!({"listChanged": true});
        }
        if self.catalog.has_completers() && version >= ProtocolVersion::V2025_03_26 {
            capabilities["completions"] = json!({});
        }
        if version.is_stateless() && self.registry.has_task_tools() {
            capabilities["extensions"] = json!({ crate::tasks::EXTENSION: {} });
        }
        capabilities
    }

    /// The gauges read from where they are kept, for the metrics.
    pub(crate) fn gauges(&self) -> Gauges {
        Gauges {
            queued_calls: self.queued_calls.load(std::sync::atomic::Ordering::Relaxed) as u64,
            listen_streams: self.listeners.open() as u64,
            tasks: self.tasks.running_here() as u64,
        }
    }

    /// The `InitializeResult` for `version`.
    pub(crate) fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.capabilities(version),
            "serverInfo": self.server_info(version),
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
            catalog: Vec::new(),
            changes: None,
            task_store: None,
            #[cfg(feature = "http")]
            event_store: None,
            middleware: Vec::new(),
        }
    }

    /// What the server has done and is doing, as JSON: by method (`methods`) and by tool
    /// (`tools`) the calls, how they ended (`outcomes`: `result`, `tool_error`, `invalid_params`,
    /// `cancelled`, `refused`…), a latency histogram (`latency`: `count`, `sumSeconds`, cumulative
    /// `buckets` of `le` seconds) and `inFlight`; `callsInFlight`, `callsQueued`, `refused` by
    /// limit, live `sessions`, open SSE `streams`, `listenStreams` and `tasks`. Counted since the
    /// server was built ([`ServerOptions::metrics`]; when off, only the gauges kept anyway).
    pub fn metrics(&self) -> Value {
        self.inner.metrics.snapshot(&self.inner.gauges())
    }

    /// The same in the Prometheus text exposition format (0.0.4) to serve to a scraper:
    /// `toolwire_requests_total{method,outcome}`, `toolwire_request_duration_seconds{method}`,
    /// `toolwire_tool_calls_total{tool,outcome}`, `toolwire_refused_total{limit}`… Its
    /// `Content-Type` is [`METRICS_CONTENT_TYPE`](crate::METRICS_CONTENT_TYPE).
    pub fn metrics_text(&self) -> String {
        self.inner.metrics.text(&self.inner.gauges())
    }

    /// Puts `middleware` in front of every request from now on, after those added before it
    /// (see [`Middleware`]).
    pub fn add_middleware(&self, middleware: impl Middleware) {
        self.inner.middleware.add(Arc::new(middleware));
    }

    /// [`add_middleware`](Self::add_middleware) for a middleware behind an `Arc`.
    pub fn add_middleware_arc(&self, middleware: Arc<dyn Middleware>) {
        self.inner.middleware.add(middleware);
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

    /// Registers a resource with a fixed URI; sessions get `notifications/resources/list_changed`.
    pub fn add_resource(
        &self,
        resource: Resource,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        self.inner.catalog.add_resource(resource, Arc::new(handler))
    }

    /// [`add_resource`](Self::add_resource) for a handler behind an `Arc`.
    pub fn add_resource_arc(
        &self,
        resource: Resource,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        self.inner.catalog.add_resource(resource, handler)
    }

    /// Registers a resource template; a `resources/read` of a URI no fixed resource has goes to
    /// the first template it matches.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        self.inner.catalog.add_template(template, Arc::new(handler))
    }

    /// [`add_resource_template`](Self::add_resource_template) for a handler behind an `Arc`.
    pub fn add_resource_template_arc(
        &self,
        template: ResourceTemplate,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        self.inner.catalog.add_template(template, handler)
    }

    /// Registers a prompt.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) -> Result<(), Error> {
        self.inner.catalog.add_prompt(prompt, Arc::new(handler))
    }

    /// [`add_prompt`](Self::add_prompt) for a handler behind an `Arc`.
    pub fn add_prompt_arc(
        &self,
        prompt: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Result<(), Error> {
        self.inner.catalog.add_prompt(prompt, handler)
    }

    /// Completes the arguments of a registered prompt or resource template
    /// (`completion/complete`); replaces an earlier completer of the same reference.
    pub fn set_completer(
        &self,
        reference: Reference,
        completer: impl Completer,
    ) -> Result<(), Error> {
        self.inner
            .catalog
            .set_completer(reference, Arc::new(completer))
    }

    /// [`set_completer`](Self::set_completer) for a completer behind an `Arc`.
    pub fn set_completer_arc(
        &self,
        reference: Reference,
        completer: Arc<dyn Completer>,
    ) -> Result<(), Error> {
        self.inner.catalog.set_completer(reference, completer)
    }

    /// Removes the resource `uri`; `false` if there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.inner.catalog.remove_resource(uri)
    }

    /// Removes the template `uri_template`; `false` if there was none.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.inner.catalog.remove_template(uri_template)
    }

    /// Removes the prompt `name`; `false` if there was none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.inner.catalog.remove_prompt(name)
    }

    /// Tells every session subscribed to `uri` that it changed (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.catalog.resource_updated(uri);
    }
}

/// Builds a [`Server`]; registration errors surface in [`build`](Self::build).
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    options: ServerOptions,
    tools: Vec<(Tool, Arc<dyn ToolHandler>)>,
    catalog: Vec<Registration>,
    changes: Option<Arc<dyn ChangeBus>>,
    task_store: Option<Arc<dyn TaskStore>>,
    #[cfg(feature = "http")]
    event_store: Option<Arc<dyn crate::events::EventStore>>,
    middleware: Vec<Arc<dyn Middleware>>,
}

/// A catalog entry given to the builder, registered in `build`.
enum Registration {
    Resource(Resource, Arc<dyn ResourceHandler>),
    Template(ResourceTemplate, Arc<dyn ResourceHandler>),
    Prompt(Prompt, Arc<dyn PromptHandler>),
    Completer(Reference, Arc<dyn Completer>),
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

    /// The bus that carries list changes and resource updates to sessions and listen streams
    /// (default: a [`LocalChangeBus`], within this process). Replicas that share one bus
    /// announce each other's changes.
    pub fn change_bus(mut self, bus: Arc<dyn ChangeBus>) -> Self {
        self.changes = Some(bus);
        self
    }

    /// Where tasks are kept (default: a [`MemoryTaskStore`], in this process).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Where legacy (2025) Streamable HTTP sessions keep their SSE events and what re-opens
    /// them, for every endpoint serving this server: replicas sharing one store let a client
    /// resume a session's stream (`Last-Event-ID`) on another replica. Set, it takes the place
    /// of [`HttpOptions::event_store`](crate::transport::http::HttpOptions::event_store).
    #[cfg(feature = "http")]
    pub fn event_store(mut self, store: Arc<dyn crate::events::EventStore>) -> Self {
        self.event_store = Some(store);
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

    /// Adds a resource with a fixed URI.
    pub fn resource(mut self, resource: Resource, handler: impl ResourceHandler) -> Self {
        self.catalog
            .push(Registration::Resource(resource, Arc::new(handler)));
        self
    }

    /// Adds a resource template.
    pub fn resource_template(
        mut self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Self {
        self.catalog
            .push(Registration::Template(template, Arc::new(handler)));
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: Prompt, handler: impl PromptHandler) -> Self {
        self.catalog
            .push(Registration::Prompt(prompt, Arc::new(handler)));
        self
    }

    /// Puts `middleware` in front of every request (after those added before it; see
    /// [`Middleware`]).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Completes the arguments of a prompt or template added to this builder.
    pub fn completer(mut self, reference: Reference, completer: impl Completer) -> Self {
        self.catalog
            .push(Registration::Completer(reference, Arc::new(completer)));
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
        if options.max_concurrent_calls_per_session == 0 {
            return Err(Error::InvalidArgument(
                "max_concurrent_calls_per_session must be at least 1".into(),
            ));
        }
        if options.max_concurrent_calls_per_principal == 0 {
            return Err(Error::InvalidArgument(
                "max_concurrent_calls_per_principal must be at least 1".into(),
            ));
        }
        if options.page_size == Some(0) {
            return Err(Error::InvalidArgument(
                "page_size must be at least 1".into(),
            ));
        }
        let metrics = Metrics::new(options.metrics);
        let registry = ToolRegistry::new(options.max_queued_calls, metrics.clone());
        for (tool, handler) in self.tools {
            registry.insert(registry.prepare(tool, handler)?)?;
        }
        let catalog = Catalog::default();
        for registration in self.catalog {
            match registration {
                Registration::Resource(def, handler) => catalog.add_resource(def, handler)?,
                Registration::Template(def, handler) => catalog.add_template(def, handler)?,
                Registration::Prompt(def, handler) => catalog.add_prompt(def, handler)?,
                Registration::Completer(reference, completer) => {
                    catalog.set_completer(reference, completer)?;
                }
            }
        }
        if options.listen_backlog == 0 {
            return Err(Error::InvalidArgument(
                "listen_backlog must be at least 1".into(),
            ));
        }
        if options.max_tasks == 0 || options.max_tasks_per_principal == 0 {
            return Err(Error::InvalidArgument(
                "max_tasks and max_tasks_per_principal must be at least 1".into(),
            ));
        }
        if options.task_ttl.is_zero() || options.task_poll_interval.is_zero() {
            return Err(Error::InvalidArgument(
                "task_ttl and task_poll_interval must be longer than zero".into(),
            ));
        }
        if options.max_request_state_bytes < 1024 {
            return Err(Error::InvalidArgument(
                "max_request_state_bytes must be at least 1024".into(),
            ));
        }
        let keys = match options.request_state_keys.clone() {
            Some(keys) => keys,
            None => StateKeys::ephemeral()?,
        };
        let sealer = Sealer::new(
            keys,
            options.request_state_ttl,
            options.max_request_state_bytes,
            &self.info.name,
        );
        // Announced from here on: what was registered above is what a client first lists.
        let changes = self
            .changes
            .unwrap_or_else(|| Arc::new(LocalChangeBus::default()));
        registry.announce_to(changes.clone());
        catalog.announce_to(changes.clone());
        let tasks = Arc::new(Tasks::new(
            self.task_store
                .unwrap_or_else(|| Arc::new(MemoryTaskStore::default())),
            changes.clone(),
            TaskSettings {
                ttl: options.task_ttl,
                poll_interval: options.task_poll_interval,
                max_tasks: options.max_tasks,
                max_per_principal: options.max_tasks_per_principal,
            },
            metrics.clone(),
        ));
        let queued_calls: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let mut inner = ServerInner {
            info: self.info,
            instructions: self.instructions,
            limits: Limits {
                max_frame_bytes: options.max_frame_bytes,
                max_depth: options.max_depth,
            },
            call_limiter: Limiter::sharing_queue(
                options.max_concurrent_calls,
                options.max_queued_calls,
                queued_calls.clone(),
            ),
            principal_limiters: PrincipalLimiters::new(
                options.max_concurrent_calls_per_principal,
                options.max_queued_calls,
                queued_calls.clone(),
            ),
            queued_calls,
            registry,
            catalog,
            modern_stamp: Arc::new(ModernStamp::new(Value::Null, 0, CacheScope::Private)),
            sealer,
            listeners: Arc::new(Listeners::new(options.max_listen_streams)),
            changes,
            tasks,
            #[cfg(feature = "http")]
            event_store: self.event_store,
            middleware: super::middleware::Chain::default(),
            metrics,
            options,
        };
        for middleware in self.middleware {
            inner.middleware.add(middleware);
        }
        inner.modern_stamp = Arc::new(ModernStamp::new(
            inner.modern_server_info(),
            inner.options.cache_ttl_ms,
            inner.options.cache_scope,
        ));
        Ok(Server {
            inner: Arc::new(inner),
        })
    }
}
