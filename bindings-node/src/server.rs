//! `NativeServer`: the core's server, for the JS `Server` wrapper.

use std::sync::Arc;
use std::time::Duration;

use napi::Either;
use napi::bindgen_prelude::{Buffer, Function, PromiseRaw, Unknown};
use napi_derive::napi;
use serde_json::Value;
use toolwire::host::{AroundMiddleware, ViaJson};
use toolwire::{Prompt, Reference, Resource, ResourceTemplate, Server, ServerOptions, Tool};

use crate::catalog::{JsJsonHandler, JsonArgs};
use crate::client::{AskArgs, NativeClient};
use crate::connection::NativeConnection;
use crate::errors;
use crate::handler::{CallArgs, JsToolHandler};
use crate::http::{HttpInit, NativeHttpServer};
use crate::lifespan::{JsLifespan, NativeLifespanHold};
use crate::middleware::{JsAround, StartArgs};
use crate::mount::{EndpointInit, NativeHttpEndpoint};
use crate::runtime::runtime;
use crate::stdio::NativeStdio;

#[napi(object)]
pub struct ServerInit {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub instructions: Option<String>,
    pub page_size: Option<u32>,
    pub default_tool_timeout_ms: Option<u32>,
    pub max_concurrent_calls: Option<u32>,
    pub max_concurrent_calls_per_session: Option<u32>,
    pub max_concurrent_calls_per_principal: Option<u32>,
    pub max_frame_bytes: Option<u32>,
    pub max_depth: Option<u32>,
    pub cache_ttl_ms: Option<u32>,
    pub cache_scope: Option<String>,
    pub request_state_keys: Option<Vec<String>>,
    pub modern_only: Option<bool>,
    pub metrics: Option<bool>,
    pub redis: Option<String>,
    pub task_after_ms: Option<u32>,
    pub task_ttl_ms: Option<u32>,
    pub task_poll_interval_ms: Option<u32>,
    pub max_tasks: Option<u32>,
    pub max_tasks_per_principal: Option<u32>,
}

#[napi]
pub struct NativeServer {
    server: Server,
}

/// A new server, or the description of why its options were refused (core's
/// `InvalidArgument`, e.g. `maxConcurrentCalls: 0`).
#[napi]
pub fn create_server(init: ServerInit) -> Either<NativeServer, Value> {
    let mut options = ServerOptions::default();
    if let Some(limit) = init.max_frame_bytes {
        options.max_frame_bytes = limit as usize;
    }
    if let Some(limit) = init.max_depth {
        options.max_depth = limit as usize;
    }
    options.page_size = init.page_size.map(|size| size as usize);
    options.default_tool_timeout = init
        .default_tool_timeout_ms
        .map(|ms| Duration::from_millis(u64::from(ms)));
    if let Some(limit) = init.max_concurrent_calls {
        options.max_concurrent_calls = limit as usize;
    }
    if let Some(limit) = init.max_concurrent_calls_per_session {
        options.max_concurrent_calls_per_session = limit as usize;
    }
    if let Some(limit) = init.max_concurrent_calls_per_principal {
        options.max_concurrent_calls_per_principal = limit as usize;
    }
    options.metrics = init.metrics.unwrap_or(true);
    let modern = toolwire::host::ModernSettings {
        cache_ttl_ms: init.cache_ttl_ms.map(u64::from),
        cache_scope: init.cache_scope,
        request_state_secrets: init.request_state_keys.unwrap_or_default(),
        modern_only: init.modern_only.unwrap_or(false),
    };
    if let Err(err) = modern.apply(&mut options) {
        return Either::B(errors::describe(&err));
    }
    toolwire::host::TaskSettings {
        task_after_ms: init.task_after_ms.map(u64::from),
        task_ttl_ms: init.task_ttl_ms.map(u64::from),
        task_poll_interval_ms: init.task_poll_interval_ms.map(u64::from),
        max_tasks: init.max_tasks.map(|limit| limit as usize),
        max_tasks_per_principal: init.max_tasks_per_principal.map(|limit| limit as usize),
    }
    .apply(&mut options);
    let mut builder = Server::builder(init.name, init.version).options(options);
    if let Some(instructions) = init.instructions {
        builder = builder.instructions(instructions);
    }
    if let Some(title) = init.title {
        builder = builder.title(title);
    }
    // On the engine's runtime (napi's), where the Redis subscription then runs.
    let shared = {
        let _entered = runtime().enter();
        toolwire::host::share_state(builder, init.redis.as_deref())
    };
    errors::or_described(
        shared
            .and_then(|builder| builder.build())
            .map(|server| NativeServer { server }),
    )
}

/// A wire-form definition handed over as JSON text (an integral number stays an integer, where
/// a JS number would arrive as a float).
fn parse_definition(kind: &'static str, json: &str) -> Result<Value, toolwire::Error> {
    serde_json::from_str::<Value>(json).map_err(|err| toolwire::Error::InvalidDefinition {
        kind,
        message: err.to_string(),
    })
}

#[napi]
impl NativeServer {
    /// Registers `handler(nativeContext, arguments)` under the wire-form `definition` (JSON
    /// text: parsed here, an integral bound stays an integer, where a JS number would arrive as
    /// a float); returns `null`, or the error's description.
    #[napi]
    pub fn add_tool(
        &self,
        definition: String,
        handler: Function<'_, CallArgs, Unknown<'static>>,
        timeout_ms: Option<u32>,
        max_concurrency: Option<u32>,
    ) -> napi::Result<Option<Value>> {
        let mut tool = match parse_definition("tool", &definition).and_then(Tool::from_json) {
            Ok(tool) => tool,
            Err(err) => return Ok(Some(errors::describe(&err))),
        };
        if let Some(ms) = timeout_ms {
            tool = tool.timeout(Duration::from_millis(u64::from(ms)));
        }
        if let Some(limit) = max_concurrency {
            tool = tool.max_concurrency(limit as usize);
        }
        let handler = JsToolHandler {
            func: handler.create_ref()?,
            remote: handler
                .build_threadsafe_function::<CallArgs>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()?,
        };
        Ok(self
            .server
            .add_tool(tool, handler)
            .err()
            .map(|err| errors::describe(&err)))
    }

    /// Puts a middleware around every request but `initialize`, after those added before it:
    /// the JS layer's `start` (see `middleware.rs`), named `middleware NAME` in refusals.
    #[napi]
    pub fn add_middleware(
        &self,
        env: napi::Env,
        start: Function<'_, StartArgs, ()>,
        name: String,
    ) -> napi::Result<()> {
        self.server.add_middleware(AroundMiddleware::new(
            JsAround::new(&env, &start)?,
            format!("middleware {name}"),
            "next()",
        ));
        Ok(())
    }

    #[napi]
    pub fn remove_tool(&self, name: String) -> bool {
        self.server.remove_tool(&name)
    }

    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// What the server has done and is doing (core's `Server::metrics`), as JSON text.
    #[napi]
    pub fn metrics_json(&self) -> String {
        self.server.metrics().to_string()
    }

    /// The metrics in the Prometheus text format.
    #[napi]
    pub fn metrics_text(&self) -> String {
        self.server.metrics_text()
    }

    /// Registers a resource (`template`: a resource template) whose reads `handler` answers;
    /// `definition` is wire-form JSON text. Returns `null`, or the error's description.
    #[napi]
    pub fn add_resource(
        &self,
        definition: String,
        template: bool,
        handler: Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<Option<Value>> {
        let handler = ViaJson(JsJsonHandler::new(&handler)?);
        let added = if template {
            parse_definition("resource template", &definition)
                .and_then(ResourceTemplate::from_json)
                .and_then(|def| self.server.add_resource_template(def, handler))
        } else {
            parse_definition("resource", &definition)
                .and_then(Resource::from_json)
                .and_then(|def| self.server.add_resource(def, handler))
        };
        Ok(added.err().map(|err| errors::describe(&err)))
    }

    /// Registers a prompt rendered by `handler` (`definition`: wire-form JSON text); returns
    /// `null`, or the error's description.
    #[napi]
    pub fn add_prompt(
        &self,
        definition: String,
        handler: Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<Option<Value>> {
        let def = match parse_definition("prompt", &definition).and_then(Prompt::from_json) {
            Ok(def) => def,
            Err(err) => return Ok(Some(errors::describe(&err))),
        };
        let handler = ViaJson(JsJsonHandler::new(&handler)?);
        Ok(self
            .server
            .add_prompt(def, handler)
            .err()
            .map(|err| errors::describe(&err)))
    }

    /// Completes a prompt's (`kind` "prompt") or template's ("template") arguments.
    #[napi]
    pub fn set_completer(
        &self,
        kind: String,
        name: String,
        handler: Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<Option<Value>> {
        let reference = match kind.as_str() {
            "prompt" => Reference::Prompt(name),
            "template" => Reference::ResourceTemplate(name),
            other => {
                return Ok(Some(errors::describe(
                    &toolwire::Error::InvalidDefinition {
                        kind: "completion",
                        message: format!("unknown completion kind {other:?}"),
                    },
                )));
            }
        };
        let completer = ViaJson(JsJsonHandler::new(&handler)?);
        Ok(self
            .server
            .set_completer(reference, completer)
            .err()
            .map(|err| errors::describe(&err)))
    }

    #[napi]
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri) || self.server.remove_resource_template(&uri)
    }

    #[napi]
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
    }

    #[napi]
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }

    /// Serves an MCP Apps view from its JSON form (core's `UiResource::from_json`); an error
    /// description when it is refused.
    #[napi]
    pub fn add_ui_resource(&self, definition: Value) -> Option<Value> {
        toolwire::UiResource::from_json(definition)
            .and_then(|view| self.server.add_ui_resource(view))
            .err()
            .map(|err| errors::describe(&err))
    }

    /// Serves a skill at `path`: its SKILL.md and the files `names[i]` → `contents[i]`; an
    /// error description when it is refused.
    #[napi]
    pub fn add_skill(
        &self,
        path: String,
        skill_md: Buffer,
        names: Vec<String>,
        contents: Vec<Buffer>,
    ) -> Option<Value> {
        let mut skill = toolwire::Skill::new(path, skill_md.to_vec());
        for (name, bytes) in names.into_iter().zip(contents) {
            skill = skill.file(name, bytes.to_vec());
        }
        self.server
            .add_skill(skill)
            .err()
            .map(|err| errors::describe(&err))
    }

    /// Serves (again, changed) the skills under the directory `root`: `{ ok: count }` or
    /// `{ error }`.
    #[napi]
    pub fn load_skills(&self, root: String) -> Value {
        match self.server.load_skills(&root) {
            Ok(count) => serde_json::json!({ "ok": count }),
            Err(err) => serde_json::json!({ "error": errors::describe(&err) }),
        }
    }

    /// `load_skills`, then again whenever the tree changes (polled every `interval_ms`):
    /// `{ ok: count }` or `{ error }`.
    #[napi]
    pub fn watch_skills(&self, root: String, interval_ms: u32) -> Value {
        let every = Duration::from_millis(u64::from(interval_ms));
        match self.server.watch_skills(&root, every) {
            Ok(count) => serde_json::json!({ "ok": count }),
            Err(err) => serde_json::json!({ "error": errors::describe(&err) }),
        }
    }

    #[napi]
    pub fn remove_skill(&self, path_or_uri: String) -> bool {
        self.server.remove_skill(&path_or_uri)
    }

    /// Sets the rule of who sees what: `handler` answers `{viewer, items}` with `{visible}`
    /// (lib/catalog.js's `visibilityWrapper`).
    #[napi]
    pub fn visible_when(
        &self,
        handler: Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        self.server
            .visible_when(ViaJson(JsJsonHandler::new(&handler)?));
        Ok(())
    }

    /// What the rule decides from changed: sessions check again (see core).
    #[napi]
    pub fn visibility_changed(&self) {
        self.server.visibility_changed();
    }

    /// Offers the tools through a search (`settings`: core's `ToolSearch` JSON) or lists them
    /// all again (`null`); an error description when it is refused.
    #[napi]
    pub fn tool_search(&self, settings: Option<Value>) -> Option<Value> {
        let search = match settings {
            None | Some(Value::Null) => None,
            Some(settings) => match toolwire::ToolSearch::from_json(&settings) {
                Ok(search) => Some(search),
                Err(err) => return Some(errors::describe(&err)),
            },
        };
        self.server
            .tool_search(search)
            .err()
            .map(|err| errors::describe(&err))
    }

    /// A mount of `inner` (a server in this process) or of what `settings` names
    /// (`{command, args, env, cwd}` or `{url, headers}`) under `prefix`, to `connect()`; or
    /// the error's description.
    #[napi]
    pub fn prepare_mount(
        &self,
        prefix: String,
        inner: Option<&NativeServer>,
        settings: Option<Value>,
        protocol_version: Option<String>,
    ) -> Either<crate::compose::NativeMount, Value> {
        let upstream = match (inner, settings) {
            (Some(inner), None | Some(Value::Null)) => {
                toolwire::compose::Upstream::Server(inner.server.clone())
            }
            (None, Some(settings)) => match toolwire::compose::Upstream::from_json(&settings) {
                Ok(upstream) => upstream,
                Err(err) => return Either::B(errors::describe(&err)),
            },
            _ => {
                return Either::B(errors::describe(&toolwire::Error::InvalidArgument(
                    "mount takes a server, or the settings of one to spawn or reach".into(),
                )));
            }
        };
        let mut options = toolwire::compose::MountOptions::default();
        options.protocol_version = protocol_version;
        Either::A(crate::compose::NativeMount::pending(
            self.server.clone(),
            prefix,
            upstream,
            options,
        ))
    }

    /// Declares an extension the server serves; an error description when it is refused.
    #[napi]
    pub fn declare_extension(&self, id: String, settings: Value) -> Option<Value> {
        self.server
            .declare_extension(&id, settings)
            .err()
            .map(|err| errors::describe(&err))
    }

    /// Sets the server's lifespan: `start` and `stop` are `lib/lifespan.js`'s hooks (see
    /// `lifespan.rs`); core decides when they run and keeps calls out until `start` has.
    #[napi]
    pub fn set_lifespan(
        &self,
        start: Function<'_, JsonArgs, Unknown<'static>>,
        stop: Function<'_, JsonArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let lifespan = JsLifespan::new(&start, &stop)?;
        self.server.set_lifespan(Some(Arc::new(lifespan)));
        Ok(())
    }

    /// Holds the lifespan for a serve of the JS layer's (stdio, `connect()`, a mount,
    /// `start()`): started first, once. Resolves to the hold, or the error's description
    /// (`TOOLWIRE_LIFESPAN` when it failed to start).
    #[napi]
    pub async fn hold_lifespan(&self) -> Either<NativeLifespanHold, Value> {
        let server = self.server.clone();
        let held = runtime()
            .spawn(async move { server.hold_lifespan().await })
            .await
            .unwrap_or_else(|err| {
                Err(toolwire::Error::Lifespan(format!(
                    "its start was abandoned: {err}"
                )))
            });
        errors::or_described(held.map(NativeLifespanHold::new))
    }

    /// Starts Streamable HTTP; `on_stopped()` runs once it has stopped (until then the server
    /// keeps the Node process alive). Returns the running server, or the error's description.
    #[napi]
    pub fn start_http(
        &self,
        init: HttpInit,
        token_validator: Option<Function<'_, JsonArgs, Unknown<'static>>>,
        on_stopped: Function<'_, (), ()>,
    ) -> napi::Result<Either<NativeHttpServer, Value>> {
        NativeHttpServer::start(&self.server, init, token_validator, &on_stopped)
            .map(errors::or_described)
    }

    /// Streamable HTTP for a web server of the app's own (`httpHandler()`): the endpoint the
    /// app routes requests to, or the error's description.
    #[napi]
    pub fn http_endpoint(
        &self,
        init: EndpointInit,
        token_validator: Option<Function<'_, JsonArgs, Unknown<'static>>>,
    ) -> napi::Result<Either<NativeHttpEndpoint, Value>> {
        NativeHttpEndpoint::create(&self.server, init, token_validator)
    }

    /// Claims stdin (core's claim: one stdio serve at a time in a process) and serves it from
    /// this JS thread's own event loop (no stream objects, no thread hop). When stdin is
    /// neither a pipe nor a socket the handle only holds the claim (`streams` is true) and
    /// JavaScript's streams carry the bytes through `connect`. Returns the error's description
    /// when stdin is taken (`TOOLWIRE_BUSY`) or cannot be opened.
    #[napi]
    pub fn serve_stdio(&self, env: napi::Env) -> Either<NativeStdio, Value> {
        errors::or_described(crate::stdio::serve(&env, &self.server))
    }

    /// Core's in-process client on a new hosted session (`toolwire/testing`, see `client.rs`):
    /// `options` is JSON text, `ask(method, paramsJson, reply)` answers the server's
    /// questions. Returns the client, not connected yet, or the description of why its options
    /// were refused.
    #[napi]
    pub fn client(
        &self,
        env: napi::Env,
        options: String,
        ask: Function<'_, AskArgs, ()>,
    ) -> napi::Result<Either<NativeClient, Value>> {
        NativeClient::open(&env, &self.server, &options, &ask)
    }

    /// Replays a golden wire vector case (`case`: JSON text) on a new hosted session with
    /// core's replayer (`toolwire/testing`'s `replayVector`, see `vectors.rs`); resolves to why
    /// it failed, or `null`.
    #[napi]
    pub fn replay_vector<'env>(
        &self,
        env: &'env napi::Env,
        case: String,
    ) -> napi::Result<PromiseRaw<'env, Option<String>>> {
        crate::vectors::replay(env, &self.server, &case)
    }

    /// A new session whose outbound frames JavaScript takes; `on_outbound()` is called (on
    /// the JS thread) when frames were queued outside a `feed`.
    #[napi]
    pub fn connect(&self, on_outbound: Function<'_, (), ()>) -> napi::Result<NativeConnection> {
        NativeConnection::open(&self.server, &on_outbound)
    }
}
