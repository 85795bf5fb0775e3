//! `Server`: the core server, its tools, and the ways to serve it.

use std::sync::Arc;

use crate::catalog::{
    ArgumentCompleter, ForeignCompleter, ForeignPrompt, ForeignResource, PromptDefinition,
    PromptRenderer, ResourceDefinition, ResourceReader,
};
use crate::client::{Client, ClientAnswerer, ClientOptions};
use crate::connection::Connection;
use crate::definition::{ServerConfig, ToolDefinition, UiResourceDefinition};
use crate::driver::StdioDriver;
use crate::errors::ToolwireError;
use crate::handler::{BlockingTool, BlockingToolHandler, ForeignTool, ToolHandler};
use crate::http::{BearerTokenValidator, HttpServer, HttpServerOptions};
use crate::lifespan::{LifespanHold, LifespanHooks};
use crate::middleware::{AroundFunction, ForeignAround};
use crate::mount::{HttpEndpoint, HttpEndpointOptions};
use crate::runtime::{on_runtime, runtime};

/// An MCP server: tools registered from host code, served over stdio or a channel of the
/// app's own. Adding or removing tools while serving notifies clients (`list_changed`).
#[derive(uniffi::Object)]
pub struct Server {
    server: toolwire::Server,
}

#[uniffi::export]
impl Server {
    /// A server named `name` at `version`; `instructions` tell the model how to use it.
    #[uniffi::constructor(default(instructions = None, config = None))]
    pub fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        config: Option<ServerConfig>,
    ) -> Result<Arc<Self>, ToolwireError> {
        let config = config.unwrap_or_default();
        let mut builder = toolwire::Server::builder(name, version).options(config.to_options()?);
        if let Some(instructions) = instructions {
            builder = builder.instructions(instructions);
        }
        if let Some(title) = config.title {
            builder = builder.title(title);
        }
        // The engine's runtime, where the Redis subscription runs, started first.
        runtime();
        let builder = toolwire::host::share_state(builder, config.redis.as_deref())?;
        Ok(Arc::new(Server {
            server: builder.build()?,
        }))
    }

    /// Registers a tool whose handler suspends (Kotlin) or is async (Swift). The schemas are
    /// compiled now: a bad definition fails here, not at the first call.
    pub fn tool(
        &self,
        definition: ToolDefinition,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ToolwireError> {
        let tool = definition.to_tool()?;
        Ok(self.server.add_tool(tool, ForeignTool(handler))?)
    }

    /// Registers a tool whose handler is a plain blocking function (run on a pool thread).
    pub fn blocking_tool(
        &self,
        definition: ToolDefinition,
        handler: Arc<dyn BlockingToolHandler>,
    ) -> Result<(), ToolwireError> {
        let tool = definition.to_tool()?;
        Ok(self.server.add_tool(tool, BlockingTool(handler))?)
    }

    /// Puts `function` around every request but `initialize` from now on, after the
    /// middlewares added before it; `name` names it in refusals and logs.
    pub fn add_middleware(&self, name: Option<String>, function: Arc<dyn AroundFunction>) {
        let label = match name {
            Some(name) => format!("middleware {name}"),
            None => "middleware".to_owned(),
        };
        self.server
            .add_middleware(toolwire::host::AroundMiddleware::new(
                ForeignAround(function),
                label,
                "next()",
            ));
    }

    /// What the server has done and is doing, as JSON text (the wrapper's `metrics()` parses
    /// it): by method and by tool the calls, outcomes, latency histogram and in-flight count;
    /// refusals by limit, live sessions, open streams, tasks.
    pub fn metrics_json(&self) -> String {
        self.server.metrics().to_string()
    }

    /// The metrics in the Prometheus text format (0.0.4), to serve on a route of the app's.
    pub fn metrics_text(&self) -> String {
        self.server.metrics_text()
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove_tool(&self, name: String) -> bool {
        self.server.remove_tool(&name)
    }

    /// The registered tools' names, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// Serves stdin/stdout until stdin ends or `stop()` is called; calls in flight finish
    /// first. Nothing but protocol goes to stdout meanwhile: log to stderr. Fails with `Busy`
    /// while stdin is already served in this process.
    pub async fn serve_stdio(&self) -> Result<(), ToolwireError> {
        let server = self.server.clone();
        on_runtime(async move { server.serve_stdio().await }).await??;
        Ok(())
    }

    /// `serve_stdio`, blocking the calling thread (for a `main` without coroutines).
    pub fn serve_stdio_blocking(&self) -> Result<(), ToolwireError> {
        let server = self.server.clone();
        let serving = runtime().spawn(async move { server.serve_stdio().await });
        match runtime().block_on(serving) {
            Ok(outcome) => Ok(outcome?),
            Err(err) => Err(ToolwireError::Internal {
                detail: format!("the serve task failed: {err}"),
            }),
        }
    }

    /// Ends everything this server serves: stdio (reading stops, calls in flight finish) and
    /// every HTTP server it started (as their own `stop()`), as core's `Server::stop`.
    pub fn stop(&self) {
        self.server.stop();
    }

    /// Sets the server's lifespan (`None` takes it away): `hooks.start` runs before the first
    /// call is handled, once however many serves hold it, and `hooks.stop` after the last
    /// serve has ended and the calls in flight have finished. Every serve of the engine holds
    /// it (`serve_stdio`, `serve_http`); a session of `connect()` or `client()`, or an
    /// `http_endpoint`, holds nothing: its first call starts it, or hold it with
    /// `hold_lifespan`. Set it before serving.
    pub fn set_lifespan(&self, hooks: Option<Arc<dyn LifespanHooks>>) {
        crate::lifespan::set(&self.server, hooks);
    }

    /// Holds the lifespan while the app serves in a way the engine does not see (a session of
    /// `connect()`, an `http_endpoint`): started first, once; a failed start is this call's
    /// `Handler` error ("the server's lifespan failed to start: …"). Release it when serving
    /// ends.
    pub async fn hold_lifespan(&self) -> Result<Arc<LifespanHold>, ToolwireError> {
        crate::lifespan::hold(&self.server).await
    }

    /// `hold_lifespan`, blocking the calling thread.
    pub fn hold_lifespan_blocking(&self) -> Result<Arc<LifespanHold>, ToolwireError> {
        crate::lifespan::hold_blocking(&self.server)
    }

    /// Registers a resource, or a resource template when `definition.uri` has `{variables}`.
    pub fn resource(
        &self,
        definition: ResourceDefinition,
        reader: Arc<dyn ResourceReader>,
    ) -> Result<(), ToolwireError> {
        let mime_type = definition.mime_type.clone();
        let handler = ForeignResource { reader, mime_type };
        match definition.into_core()? {
            Ok(resource) => self.server.add_resource(resource, handler)?,
            Err(template) => self.server.add_resource_template(template, handler)?,
        }
        Ok(())
    }

    /// Registers a prompt.
    pub fn prompt(
        &self,
        definition: PromptDefinition,
        renderer: Arc<dyn PromptRenderer>,
    ) -> Result<(), ToolwireError> {
        Ok(self
            .server
            .add_prompt(definition.into_core(), ForeignPrompt(renderer))?)
    }

    /// Completes the arguments of the prompt `prompt_name`.
    pub fn prompt_completion(
        &self,
        prompt_name: String,
        completer: Arc<dyn ArgumentCompleter>,
    ) -> Result<(), ToolwireError> {
        Ok(self.server.set_completer(
            toolwire::Reference::Prompt(prompt_name),
            ForeignCompleter(completer),
        )?)
    }

    /// Completes the variables of the resource template `uri_template`.
    pub fn template_completion(
        &self,
        uri_template: String,
        completer: Arc<dyn ArgumentCompleter>,
    ) -> Result<(), ToolwireError> {
        Ok(self.server.set_completer(
            toolwire::Reference::ResourceTemplate(uri_template),
            ForeignCompleter(completer),
        )?)
    }

    /// Removes a resource or template; returns whether it existed.
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri) || self.server.remove_resource_template(&uri)
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
    }

    /// Tells the clients subscribed to `uri` that it changed.
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }

    /// Serves an MCP Apps view for tools to link to (`ToolDefinition.uiResource`); removed with
    /// `removeResource`. A `Registration` error names what the spec forbids.
    pub fn add_ui_resource(&self, view: UiResourceDefinition) -> Result<(), ToolwireError> {
        Ok(self.server.add_ui_resource(view.into_core()?)?)
    }

    /// Serves an Agent Skill (the Skills extension) at `skill://{path}/`: its SKILL.md (YAML
    /// frontmatter with `name`, the last segment of `path`, and `description`) and `files`, by
    /// path within the skill. A `Registration` error names what the spec refuses.
    pub fn add_skill(
        &self,
        path: String,
        skill_md: Vec<u8>,
        files: std::collections::HashMap<String, Vec<u8>>,
    ) -> Result<(), ToolwireError> {
        let mut skill = toolwire::Skill::new(path, skill_md);
        for (name, contents) in files {
            skill = skill.file(name, contents);
        }
        Ok(self.server.add_skill(skill)?)
    }

    /// Serves the skills under the directory `root` (every directory holding a SKILL.md); call
    /// it again to serve what changed (sessions are told). All or nothing. Returns how many.
    pub fn load_skills(&self, root: String) -> Result<u32, ToolwireError> {
        let count = self.server.load_skills(&root)?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// `loadSkills(root)`, then loads it again whenever its files change, as long as the server
    /// lives (the tree compared every `interval_ms`). Returns how many skills the first load
    /// found.
    #[uniffi::method(default(interval_ms = 1000))]
    pub fn watch_skills(&self, root: String, interval_ms: u64) -> Result<u32, ToolwireError> {
        let count = self
            .server
            .watch_skills(&root, std::time::Duration::from_millis(interval_ms))?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// Stops serving a skill, by its path or its SKILL.md's URI; returns whether it existed.
    pub fn remove_skill(&self, path_or_uri: String) -> bool {
        self.server.remove_skill(&path_or_uri)
    }

    /// Decides per request who sees which tools, resources, templates and prompts, beyond
    /// their `requiredScopes` / `requiredTags`; a hidden item is left out of lists and answers
    /// as unknown. Replaces the rule set before; sessions whose view changes get `list_changed`.
    pub fn visible_when(&self, rule: Arc<dyn crate::visibility::VisibilityRule>) {
        self.server
            .visible_when(crate::visibility::ForeignRule(rule));
    }

    /// What the visibility rule decides from changed (a user's role, a feature flag): every
    /// session checks again and gets `list_changed` where its view changed.
    pub fn visibility_changed(&self) {
        self.server.visibility_changed();
    }

    /// Offers the tools through a search, for catalogs too large to list whole: `tools/list`
    /// shows the pinned tools and two of the engine's own, `search_tools` (ranked full-text
    /// search: BM25F) and `call_tool` (calls a tool by name). Every tool stays callable by its
    /// own name; a search finds only what the client may see; a call through `call_tool` is
    /// the named tool's call for middleware and limits. `null` lists every tool again. Throws
    /// `Registration` when a tool already has one of the two names or a setting is refused.
    pub fn tool_search(
        &self,
        search: Option<crate::catalog::ToolSearch>,
    ) -> Result<(), ToolwireError> {
        Ok(self.server.tool_search(search.map(Into::into))?)
    }

    /// Mounts another server's tools, resources, templates and prompts under `prefix`: a
    /// `Server` in this process, a server to spawn over stdio, or a Streamable HTTP server.
    /// Names become `{prefix}_{name}` and URIs `scheme://{prefix}/rest`; a call is forwarded
    /// with its progress and cancellation, and what the upstream asks during it (elicitation,
    /// sampling, roots) is asked of this server's client; this server's middleware, limits and
    /// visibility apply. List changes are followed; an upstream that went away is connected
    /// again on the next call. `protocol_version`: the version asked of the upstream (default
    /// 2026-07-28, falling back to `initialize` for a handshake-era server). Throws `Transport`
    /// when it cannot connect, `InvalidArgument` for a bad prefix.
    #[uniffi::method(default(protocol_version = None))]
    pub async fn mount(
        &self,
        prefix: String,
        upstream: crate::compose::Upstream,
        protocol_version: Option<String>,
    ) -> Result<Arc<crate::compose::Mount>, ToolwireError> {
        let server = self.server.clone();
        let upstream = upstream.into_core();
        let mut options = toolwire::compose::MountOptions::default();
        options.protocol_version = protocol_version;
        let mount = crate::runtime::on_runtime_abortable(async move {
            server.mount_with(&prefix, upstream, options).await
        })
        .await??;
        Ok(Arc::new(crate::compose::Mount { mount }))
    }

    /// Declares an extension this server serves: `capabilities.extensions[id]` is the JSON
    /// object `settings_json` in `initialize` and `server/discover`.
    #[uniffi::method(default(settings_json = "{}"))]
    pub fn declare_extension(
        &self,
        id: String,
        settings_json: String,
    ) -> Result<(), ToolwireError> {
        let settings =
            serde_json::from_str(&settings_json).map_err(|err| ToolwireError::Registration {
                detail: format!("the settings of extension {id} are not valid JSON: {err}"),
            })?;
        Ok(self.server.declare_extension(&id, settings)?)
    }

    /// Serves Streamable HTTP at `http://host:port/mcp` (port 0 picks one) until `stop()`;
    /// returns once listening (a port in use fails here). With a validator every request
    /// needs a bearer token it accepts.
    #[uniffi::method(default(options = None, validator = None))]
    pub fn serve_http(
        &self,
        host: String,
        port: u16,
        options: Option<HttpServerOptions>,
        validator: Option<Arc<dyn BearerTokenValidator>>,
    ) -> Result<Arc<HttpServer>, ToolwireError> {
        let http = HttpServer::start(
            &self.server,
            host,
            port,
            options.unwrap_or_default(),
            validator,
        )?;
        Ok(http)
    }

    /// Streamable HTTP inside a web server of the app's own (Kotlin: the Ktor route
    /// `mcp(path, server)`): an endpoint that answers the requests the app hands it. Options
    /// as `serve_http`'s less the listener's; with a validator every request needs a bearer
    /// token it accepts. `stop()` does not end it: its `shutdown()` does.
    #[uniffi::method(default(options = None, validator = None))]
    pub fn http_endpoint(
        &self,
        options: Option<HttpEndpointOptions>,
        validator: Option<Arc<dyn BearerTokenValidator>>,
    ) -> Result<Arc<HttpEndpoint>, ToolwireError> {
        HttpEndpoint::start(&self.server, options.unwrap_or_default(), validator)
    }

    /// A session over a channel of the app's own: feed it inbound messages, take its
    /// outbound ones. Each connection is one MCP session. It holds nothing: its first call
    /// starts the lifespan, which runs until `stop()` (or hold it with `hold_lifespan`).
    pub fn connect(&self) -> Arc<Connection> {
        Connection::new(&self.server)
    }

    /// A client of this server in the same process, as a real client drives it (core's: both
    /// eras, `input_required` rounds answered): a new session like `connect()`'s, its
    /// handshake done when this returns. `answerer` answers the questions `options` says it
    /// answers. What Kotlin's `dev.toolwire.testing.TestClient` wraps.
    #[uniffi::method(default(options = None, answerer = None))]
    pub async fn client(
        &self,
        options: Option<ClientOptions>,
        answerer: Option<Arc<dyn ClientAnswerer>>,
    ) -> Result<Arc<Client>, ToolwireError> {
        Client::connect(&self.server, options.unwrap_or_default(), answerer).await
    }

    /// Replays one golden wire vector case (`tests/vectors`: frames sent, frames expected;
    /// `case_json` is its JSON text, so an integer beyond 2^53 stays exact) with core's
    /// replayer, on a new session like `connect()`'s. Returns why it failed (the step and what
    /// came instead), or `null`/`nil` when it held; JSON that does not parse is
    /// `InvalidArgument`. What Kotlin's `dev.toolwire.testing.replayVector` wraps.
    pub async fn replay_vector(&self, case_json: String) -> Result<Option<String>, ToolwireError> {
        crate::vectors::replay(&self.server, &case_json).await
    }
}

impl Server {
    /// The core server, for the Kotlin wrapper's private interface (`jvm_abi`).
    pub(crate) fn core(&self) -> &toolwire::Server {
        &self.server
    }

    /// Opens stdio for the Kotlin wrapper's `runStdio()` (see `StdioDriver`); `stop()` ends it.
    pub(crate) fn open_stdio_driver(&self) -> Result<Arc<StdioDriver>, ToolwireError> {
        StdioDriver::open(&self.server)
    }
}
