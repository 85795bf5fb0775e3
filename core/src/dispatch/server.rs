//! [`Server`]: what every session and transport of one server shares (`ServerInner`), and the
//! API to change it while serving.

use std::any::Any;
use std::sync::Arc;

use serde_json::{Value, json};

use super::builder::ServerBuilder;
use super::middleware::{Chain, Middleware};
use super::modern::{Listeners, ModernStamp, Sealer};
use super::options::ServerOptions;
use super::session::{Outbound, Session, current_runtime};
use crate::Error;
use crate::catalog::{
    Catalog, Completer, Prompt, PromptHandler, Reference, Resource, ResourceHandler,
    ResourceTemplate,
};
use crate::changes::ChangeBus;
use crate::handler::ToolHandler;
use crate::limiter::{Limiter, PrincipalLimiters};
use crate::metrics::{Gauges, Metrics};
use crate::protocol::{Implementation, ProtocolVersion, Tool};
use crate::registry::ToolRegistry;
use crate::skills::Skill;
use crate::tasks::Tasks;
use crate::wire::Limits;

/// A handler as the server keeps it: one given already behind an `Arc` (of the trait object)
/// is kept as it is rather than wrapped in a second one, which would cost a pointer and a
/// boxed future more on every call.
pub(crate) fn share<D: ?Sized + 'static, T: 'static>(
    handler: T,
    wrap: impl FnOnce(T) -> Arc<D>,
) -> Arc<D> {
    match (&handler as &dyn Any).downcast_ref::<Arc<D>>() {
        Some(shared) => shared.clone(),
        None => wrap(handler),
    }
}

/// A tool checked and compiled for the registry, its MCP Apps link (if any) checked against the
/// views `catalog` serves.
pub(crate) fn prepare_tool(
    registry: &ToolRegistry,
    catalog: &Catalog,
    mut tool: Tool,
    handler: Arc<dyn ToolHandler>,
) -> Result<crate::registry::RegisteredTool, Error> {
    catalog.note_guarded(&tool);
    // A view registered as such, or a ui:// resource or template of the catalog (a view made
    // per read).
    let app_only = crate::apps::link_tool(&mut tool, &|uri| {
        catalog.views.get(uri).is_some() || catalog.find_resource(uri).is_some()
    })?;
    let mut prepared = registry.prepare(tool, handler)?;
    prepared.app_only = app_only;
    Ok(prepared)
}

/// An extension's identifier is `{vendor-prefix}/{name}` and its settings an object; the
/// engine's own extensions are declared by the engine.
pub(crate) fn check_extension(id: &str, settings: &Value) -> Result<(), Error> {
    let invalid = |message: String| Error::InvalidDefinition {
        kind: "extension",
        message,
    };
    let well_formed = id
        .split_once('/')
        .is_some_and(|(vendor, name)| !vendor.is_empty() && !name.is_empty());
    if !well_formed || id.chars().any(char::is_whitespace) {
        return Err(invalid(format!(
            "extension identifier {id:?} must be `vendor-prefix/name` (e.g. `com.example/widgets`)"
        )));
    }
    if id == crate::tasks::EXTENSION
        || id == crate::skills::EXTENSION
        || id == crate::apps::EXTENSION
    {
        return Err(invalid(format!(
            "{id} is declared by the engine when it is served (register task tools, skills or views)"
        )));
    }
    if !settings.is_object() {
        return Err(invalid(format!(
            "the settings of extension {id} must be a JSON object ({{}} for none)"
        )));
    }
    Ok(())
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
    /// The same with `cacheScope: "private"`, for results once the catalog is screened: what
    /// one client is shown is not for a shared cache.
    pub(crate) private_stamp: Arc<ModernStamp>,
    pub(crate) sealer: Sealer,
    pub(crate) listeners: Arc<Listeners>,
    /// Where list changes and resource updates travel to sessions and listen streams.
    pub(crate) changes: Arc<dyn ChangeBus>,
    /// The sessions that hear of those changes, and the task that tells them.
    pub(crate) watchers: Arc<super::watch::Watchers>,
    /// Tool calls that outlive their request (the tasks extension).
    pub(crate) tasks: Arc<Tasks>,
    /// Legacy SSE events and session records shared with other replicas: Streamable HTTP
    /// uses it instead of its own `event_store`.
    #[cfg(feature = "http")]
    pub(crate) event_store: Option<Arc<dyn crate::events::EventStore>>,
    /// The host's rules in front of every request.
    pub(crate) middleware: Chain,
    /// Whether tools are offered through a search (see [`Server::tool_search`]).
    pub(crate) search: super::search::SearchSwitch,
    /// What [`Server::stop`] ends: every serve started since the last stop holds a child.
    pub(crate) stopping: std::sync::Mutex<tokio_util::sync::CancellationToken>,
    /// What the app sets up before its first call and tears down after serving.
    pub(crate) lifespan: Arc<super::LifespanGate>,
    pub(crate) metrics: Arc<Metrics>,
    /// Extensions the server declares itself (`capabilities.extensions`), by identifier.
    pub(crate) extensions: std::sync::RwLock<serde_json::Map<String, Value>>,
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
        let mut extensions = self
            .extensions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if version.is_stateless() && self.registry.has_task_tools() {
            extensions.insert(crate::tasks::EXTENSION.into(), json!({}));
        }
        if self.catalog.has_views() {
            extensions.insert(crate::apps::EXTENSION.into(), json!({}));
        }
        if self.catalog.has_skills() {
            extensions.insert(crate::skills::EXTENSION.into(), crate::skills::capability());
        }
        if !extensions.is_empty() {
            capabilities["extensions"] = Value::Object(extensions);
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
    /// A new session on the current tokio runtime, for a transport of your own.
    pub fn session(&self) -> Result<(Session, Outbound), Error> {
        Ok(Session::with_runtime(self, current_runtime()?))
    }

    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
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
        self.inner
            .middleware
            .add(share(middleware, |m| Arc::new(m)));
    }

    /// Puts `around` around every request from now on, after the middlewares added before it
    /// (see [`Around`](crate::middleware::Around)); `name` names it in refusals and logs.
    pub fn add_around(&self, name: &str, around: impl crate::middleware::Around) {
        self.add_middleware(super::around::AroundMiddleware::rust(around, name));
    }

    /// [`add_middleware`](Self::add_middleware) for a middleware behind an `Arc`.
    #[deprecated(
        since = "0.2.0",
        note = "`add_middleware` takes an `Arc<dyn Middleware>` too"
    )]
    pub fn add_middleware_arc(&self, middleware: Arc<dyn Middleware>) {
        self.add_middleware(middleware);
    }

    /// Registers a tool while serving; initialized sessions get one coalesced
    /// `notifications/tools/list_changed`.
    /// A handler behind an `Arc` is kept as it is.
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<(), Error> {
        let registry = &self.inner.registry;
        let search = &self.inner.search;
        let prepared = prepare_tool(
            registry,
            &self.inner.catalog,
            tool,
            share(handler, |h| Arc::new(h)),
        )?;
        registry.insert_unless(prepared, |name| {
            search.reserves(name).then(|| Error::InvalidDefinition {
                kind: "tool",
                message: format!("{name:?} is the tool search's own tool; name yours otherwise"),
            })
        })
    }

    /// [`add_tool`](Self::add_tool) for a handler already behind an `Arc` (as bindings hold them).
    #[deprecated(
        since = "0.2.0",
        note = "`add_tool` takes an `Arc<dyn ToolHandler>` too"
    )]
    pub fn add_tool_arc(&self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<(), Error> {
        self.add_tool(tool, handler)
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
        self.inner
            .catalog
            .add_resource(resource, share(handler, |h| Arc::new(h)))
    }

    /// [`add_resource`](Self::add_resource) for a handler behind an `Arc`.
    #[deprecated(
        since = "0.2.0",
        note = "`add_resource` takes an `Arc<dyn ResourceHandler>` too"
    )]
    pub fn add_resource_arc(
        &self,
        resource: Resource,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        self.add_resource(resource, handler)
    }

    /// Registers a resource template; a `resources/read` of a URI no fixed resource has goes to
    /// the first template it matches.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        self.inner
            .catalog
            .add_template(template, share(handler, |h| Arc::new(h)))
    }

    /// [`add_resource_template`](Self::add_resource_template) for a handler behind an `Arc`.
    #[deprecated(
        since = "0.2.0",
        note = "`add_resource_template` takes an `Arc<dyn ResourceHandler>` too"
    )]
    pub fn add_resource_template_arc(
        &self,
        template: ResourceTemplate,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        self.add_resource_template(template, handler)
    }

    /// Registers a prompt.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) -> Result<(), Error> {
        self.inner
            .catalog
            .add_prompt(prompt, share(handler, |h| Arc::new(h)))
    }

    /// [`add_prompt`](Self::add_prompt) for a handler behind an `Arc`.
    #[deprecated(
        since = "0.2.0",
        note = "`add_prompt` takes an `Arc<dyn PromptHandler>` too"
    )]
    pub fn add_prompt_arc(
        &self,
        prompt: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Result<(), Error> {
        self.add_prompt(prompt, handler)
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
            .set_completer(reference, share(completer, |c| Arc::new(c)))
    }

    /// [`set_completer`](Self::set_completer) for a completer behind an `Arc`.
    #[deprecated(
        since = "0.2.0",
        note = "`set_completer` takes an `Arc<dyn Completer>` too"
    )]
    pub fn set_completer_arc(
        &self,
        reference: Reference,
        completer: Arc<dyn Completer>,
    ) -> Result<(), Error> {
        self.set_completer(reference, completer)
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

    /// Serves an MCP Apps view (a `ui://` resource) for tools to link to
    /// ([`Tool::ui_resource`]); sessions get `notifications/resources/list_changed`. Refused,
    /// naming the fault, when the spec forbids it (a scheme other than `ui://`, a document that
    /// is not HTML5, a malformed `_meta.ui`). Remove it with
    /// [`remove_resource`](Self::remove_resource).
    pub fn add_ui_resource(&self, view: crate::apps::UiResource) -> Result<(), Error> {
        self.inner.catalog.add_view(view)
    }

    /// Decides per request who sees which tools, resources, templates and prompts, beyond
    /// what their definitions require (`required_scopes`, `required_tags`): asked with the
    /// request's [`Viewer`] and the items whose requirements it met, once per list (or once
    /// for the one item called, read, rendered or completed). A hidden item is left out of
    /// lists and answers as unknown. Replaces the rule set before; sessions whose view
    /// changes get `list_changed`.
    ///
    /// [`Viewer`]: crate::catalog::visibility::Viewer
    pub fn visible_when(&self, policy: impl crate::catalog::visibility::VisibilityPolicy) {
        self.inner
            .catalog
            .set_policy(Some(share(policy, |p| Arc::new(p))));
        self.visibility_changed();
    }

    /// What the visibility rule decides from has changed (a user's role, a feature flag):
    /// every session checks what it sees again and gets `list_changed` for each list whose
    /// view changed (on every replica, over a shared change bus).
    pub fn visibility_changed(&self) {
        for change in [
            crate::Change::ToolsListChanged,
            crate::Change::ResourcesListChanged,
            crate::Change::PromptsListChanged,
        ] {
            self.inner.changes.publish(change);
        }
    }

    /// Offers the tools through a search, for catalogs too large to list whole: `tools/list`
    /// shows the pinned tools and two of the engine's own, `search_tools` (ranked full-text
    /// search over names, titles, descriptions and arguments; BM25F) and `call_tool` (calls a
    /// tool by name). Every tool stays callable by its own name; a search finds only what the
    /// request may see ([`visible_when`](Self::visible_when), required scopes and tags), and a
    /// call through `call_tool` is the named tool's call for middleware, limits and metrics.
    /// `None` lists every tool again. Sessions get `notifications/tools/list_changed`. Refused
    /// when a registered tool has one of the search's tools' names, or `search` is invalid.
    pub fn tool_search(&self, search: impl Into<Option<crate::ToolSearch>>) -> Result<(), Error> {
        self.inner.search.set(&self.inner.registry, search.into())?;
        self.inner.changes.publish(crate::Change::ToolsListChanged);
        Ok(())
    }

    /// Serves a skill (the Skills extension); sessions get
    /// `notifications/resources/list_changed`, its SKILL.md being listed with the resources.
    pub fn add_skill(&self, skill: Skill) -> Result<(), Error> {
        self.inner.catalog.add_skill(skill)
    }

    /// Stops serving the skill at `path` (`"acme/billing/refunds"`) or whose SKILL.md is at
    /// `uri`; `false` if there was none.
    pub fn remove_skill(&self, path_or_uri: &str) -> bool {
        self.inner.catalog.remove_skill(path_or_uri)
    }

    /// Serves the skills under the directory `root` (see [`Skill::load_dir`]), replacing those
    /// an earlier load of the same directory gave: call it again to pick up changes (sessions
    /// are told when anything changed). Returns how many skills it has. All or nothing: on an
    /// error, what is served stays as it was.
    pub fn load_skills(&self, root: impl AsRef<std::path::Path>) -> Result<usize, Error> {
        self.inner.catalog.load_skills(root.as_ref())
    }

    /// [`load_skills`](Self::load_skills), then loads the directory again whenever its files
    /// change, as long as the server lives: a thread of its own compares the tree's files
    /// (paths, sizes, modification times) every `every`, so sessions hear of a changed tree
    /// within about that. A load that fails then is logged and leaves what is served as it was;
    /// the next change is tried again. Returns how many skills the first load found.
    pub fn watch_skills(
        &self,
        root: impl AsRef<std::path::Path>,
        every: std::time::Duration,
    ) -> Result<usize, Error> {
        if every.is_zero() {
            return Err(Error::InvalidArgument(
                "watch_skills: the interval must be above zero".into(),
            ));
        }
        let root = root.as_ref().to_path_buf();
        // Read before the load: a change between the two is seen by the first comparison.
        let mut last = crate::skills::fingerprint(&root)?;
        let count = self.load_skills(&root)?;
        let server = Arc::downgrade(&self.inner);
        std::thread::Builder::new()
            .name("toolwire-skills-watch".into())
            .spawn(move || {
                let mut failing = false;
                loop {
                    std::thread::sleep(every);
                    // The server gone, the watch ends.
                    let Some(inner) = server.upgrade() else {
                        return;
                    };
                    let now = match crate::skills::fingerprint(&root) {
                        Ok(now) => now,
                        Err(err) => {
                            if !failing {
                                tracing::warn!(root = %root.display(), "skills watch: {err}");
                            }
                            failing = true;
                            continue;
                        }
                    };
                    if now == last && !failing {
                        continue;
                    }
                    failing = false;
                    last = now;
                    if let Err(err) = inner.catalog.load_skills(&root) {
                        tracing::warn!(
                            root = %root.display(),
                            "skills watch: the changed tree was not loaded (what was served stays): {err}"
                        );
                    }
                }
            })
            // The OS refused a thread: its error, as any other of the OS's.
            ?;
        Ok(count)
    }

    /// Declares an extension this server serves, with its settings (a JSON object), in
    /// `capabilities.extensions` of `initialize` and `server/discover`. The extensions the
    /// engine serves itself (tasks, skills) are declared by it; a handler reads what the client
    /// declared with [`Context::client_extension`](crate::Context::client_extension).
    pub fn declare_extension(&self, id: &str, settings: Value) -> Result<(), Error> {
        check_extension(id, &settings)?;
        self.inner
            .extensions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), settings);
        Ok(())
    }

    /// Ends everything this server serves: every [`serve`](Self::serve) and stdio serve
    /// (reading stops; calls in flight finish, as at end of input) and every HTTP server
    /// [`serve_http`](Self::serve_http) started (as its own shutdown), and the host stdio loops
    /// of the bindings. Sessions of your own ([`session`](Self::session), `http_endpoint`) are
    /// yours to end. The lifespan stops once the serves have ended (one that only calls
    /// started, too). Serving may start again afterwards.
    pub fn stop(&self) {
        let mut stopping = self
            .inner
            .stopping
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let stopped = std::mem::take(&mut *stopping);
        drop(stopping);
        stopped.cancel();
        // The serves just ended let go of the lifespan as they end; one a call started has
        // no serve to let go of it.
        self.inner.lifespan.stop_unheld();
    }

    /// Sets the server's lifespan (see [`Lifespan`](crate::Lifespan) for the rules); `None`
    /// takes it away. Set it before serving: a lifespan running then is stopped by the
    /// hooks it was started with only if they are still set.
    pub fn set_lifespan(&self, lifespan: Option<Arc<dyn crate::Lifespan>>) {
        self.inner.lifespan.set(lifespan);
    }

    /// Holds the lifespan while something serves that the engine does not (a transport of
    /// your own, a mounted endpoint): started first, once, and a failed start is this call's
    /// [`Error::Lifespan`]. Every serve of the engine holds it itself.
    pub async fn hold_lifespan(&self) -> Result<crate::LifespanHold, Error> {
        self.inner.lifespan.hold().await
    }

    /// A token cancelled by the next [`stop`](Self::stop), for a serving loop of your own.
    pub fn stop_token(&self) -> tokio_util::sync::CancellationToken {
        self.inner
            .stopping
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .child_token()
    }

    /// Tells every session subscribed to `uri` that it changed (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.catalog.resource_updated(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_behind_an_arc_is_not_wrapped_again() {
        let handler: Arc<dyn ToolHandler> =
            Arc::new(|_ctx: crate::Context, args: Value| async move {
                Ok::<_, crate::ToolError>(crate::ToolOutput::structured(args))
            });
        let kept = share(handler.clone(), |h| Arc::new(h) as Arc<dyn ToolHandler>);
        assert!(Arc::ptr_eq(&kept, &handler));
        let wrapped = share(
            |_ctx: crate::Context, _args: Value| async move {
                Ok::<_, crate::ToolError>(crate::ToolOutput::text("x"))
            },
            |h| Arc::new(h) as Arc<dyn ToolHandler>,
        );
        assert_eq!(Arc::strong_count(&wrapped), 1);
    }
}
