//! `NativeServer` and `NativeSession`: the core's server and bring-your-own-transport session.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use toolwire::client::vectors::{self, SessionWire};
use toolwire::host::{HttpSettings, ViaJson};
use toolwire::transport::http::{BearerAuth, HttpOptions, ResponseMode};
use toolwire::{
    CancellationToken, Outbound, Prompt, Reference, Resource, ResourceTemplate, Server,
    ServerOptions, Session, Tool,
};

use crate::bridge::{BridgeHandle, LoopBridge};
use crate::catalog::PyJsonHandler;
use crate::client::NativeClient;
use crate::convert::to_json;
use crate::errors::to_py_err;
use crate::handler::{BridgeSlot, PyToolHandler};
use crate::http::NativeHttpServer;
use crate::middleware::PyAround;
use crate::mount::NativeHttpEndpoint;
use toolwire::host::AroundMiddleware;
use toolwire::host::runtime;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeServer {
    server: Server,
    bridge: Arc<BridgeSlot>,
}

#[pymethods]
impl NativeServer {
    #[new]
    #[pyo3(signature = (name, version, instructions=None, title=None, page_size=None,
                        default_tool_timeout_ms=None, max_concurrent_calls=None,
                        max_concurrent_calls_per_session=None,
                        max_concurrent_calls_per_principal=None, max_outbound_bytes=None,
                        max_frame_bytes=None, max_depth=None, cache_ttl_ms=None, cache_scope=None,
                        request_state_keys=None, modern_only=false, sync_handler_threads=None,
                        metrics=true, redis=None, task_after_ms=None, task_ttl_ms=None,
                        task_poll_interval_ms=None, max_tasks=None,
                        max_tasks_per_principal=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "mirrors the Python constructor's keywords"
    )]
    fn new(
        py: Python<'_>,
        name: &str,
        version: &str,
        instructions: Option<&str>,
        title: Option<&str>,
        page_size: Option<usize>,
        default_tool_timeout_ms: Option<u64>,
        max_concurrent_calls: Option<usize>,
        max_concurrent_calls_per_session: Option<usize>,
        max_concurrent_calls_per_principal: Option<usize>,
        max_outbound_bytes: Option<usize>,
        max_frame_bytes: Option<usize>,
        max_depth: Option<usize>,
        cache_ttl_ms: Option<u64>,
        cache_scope: Option<String>,
        request_state_keys: Option<Vec<String>>,
        modern_only: bool,
        sync_handler_threads: Option<usize>,
        metrics: bool,
        redis: Option<&str>,
        task_after_ms: Option<u64>,
        task_ttl_ms: Option<u64>,
        task_poll_interval_ms: Option<u64>,
        max_tasks: Option<usize>,
        max_tasks_per_principal: Option<usize>,
    ) -> PyResult<Self> {
        if let Some(threads) = sync_handler_threads {
            crate::threads::check_threads(threads).map_err(PyValueError::new_err)?;
        }
        let mut options = ServerOptions::default();
        if let Some(limit) = max_frame_bytes {
            options.max_frame_bytes = limit;
        }
        if let Some(limit) = max_depth {
            options.max_depth = limit;
        }
        options.page_size = page_size;
        options.default_tool_timeout = default_tool_timeout_ms.map(Duration::from_millis);
        if let Some(limit) = max_concurrent_calls {
            options.max_concurrent_calls = limit;
        }
        if let Some(limit) = max_concurrent_calls_per_session {
            options.max_concurrent_calls_per_session = limit;
        }
        if let Some(limit) = max_concurrent_calls_per_principal {
            options.max_concurrent_calls_per_principal = limit;
        }
        if let Some(limit) = max_outbound_bytes {
            options.max_outbound_bytes = limit;
        }
        options.metrics = metrics;
        toolwire::host::ModernSettings {
            cache_ttl_ms,
            cache_scope,
            request_state_secrets: request_state_keys.unwrap_or_default(),
            modern_only,
        }
        .apply(&mut options)
        .map_err(to_py_err)?;
        toolwire::host::TaskSettings {
            task_after_ms,
            task_ttl_ms,
            task_poll_interval_ms,
            max_tasks,
            max_tasks_per_principal,
        }
        .apply(&mut options);
        let mut builder = Server::builder(name, version).options(options);
        if let Some(instructions) = instructions {
            builder = builder.instructions(instructions);
        }
        if let Some(title) = title {
            builder = builder.title(title);
        }
        // Connecting waits for Redis (at most its connect and command timeouts): without the GIL.
        let builder = py
            .detach(|| toolwire::host::share_state(builder, redis))
            .map_err(to_py_err)?;
        let server = builder.build().map_err(to_py_err)?;
        // Raised once the server is sure to exist: a refused one leaves the process as it was.
        if let Some(threads) = sync_handler_threads {
            crate::threads::allow_threads(threads).map_err(PyValueError::new_err)?;
        }
        Ok(NativeServer {
            server,
            bridge: Arc::default(),
        })
    }

    /// Registers `func(ctx, arguments) -> returned value` under the wire-form `definition`;
    /// a sync `func` runs on the Python threads unless `in_thread` is false.
    #[pyo3(signature = (definition, func, is_async, timeout_ms=None, max_concurrency=None, in_thread=true))]
    fn add_tool(
        &self,
        definition: &Bound<'_, PyAny>,
        func: Py<PyAny>,
        is_async: bool,
        timeout_ms: Option<u64>,
        max_concurrency: Option<usize>,
        in_thread: bool,
    ) -> PyResult<()> {
        let mut tool = Tool::from_json(to_json(definition)?).map_err(to_py_err)?;
        if let Some(ms) = timeout_ms {
            tool = tool.timeout(Duration::from_millis(ms));
        }
        if let Some(limit) = max_concurrency {
            tool = tool.max_concurrency(limit);
        }
        let handler = PyToolHandler {
            func: Arc::new(func),
            is_async,
            in_thread,
            bridge: self.bridge.clone(),
        };
        self.server.add_tool(tool, handler).map_err(to_py_err)
    }

    /// Ends every serve of this server, stdio and each HTTP server it started: reading (or
    /// accepting) stops, calls in flight drain (`toolwire::Server::stop`).
    fn stop(&self) {
        self.server.stop();
    }

    fn remove_tool(&self, name: &str) -> bool {
        self.server.remove_tool(name)
    }

    fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// A bridge to `event_loop` for `async def` tools; the caller registers it with
    /// `event_loop.add_reader(bridge.fileno(), bridge.drain)`.
    fn bridge(&self, event_loop: Py<PyAny>) -> PyResult<LoopBridge> {
        Ok(LoopBridge::new(event_loop)?)
    }

    /// Serves stdio until stdin ends or `stop()`; blocks (without the GIL). `async def` tools
    /// run on the bridge's loop, which must keep running meanwhile (run this in an executor
    /// thread). With no bridge, the loop `async def` tools run on stays whatever `use_bridge`
    /// set (none: a server of plain functions serves with no asyncio at all). Fails with
    /// `BusyError` while stdin is served already in this process; the serve that holds it keeps
    /// its stop token.
    #[pyo3(signature = (bridge, stop))]
    fn serve_stdio(
        &self,
        py: Python<'_>,
        bridge: Option<&LoopBridge>,
        stop: &StopSignal,
    ) -> PyResult<()> {
        // Claimed before anything of ours changes: a refused serve leaves the running one be.
        let claim = toolwire::host::StdioClaim::take().map_err(to_py_err)?;
        // Ended by the caller's signal (this serve alone) or by `stop()` (every serve: core's).
        let stop = stop.token.child_token();
        let ours = bridge.map(|bridge| {
            let ours = bridge.handle();
            let previous = self.swap_loop(Some(ours.clone()));
            (ours, previous)
        });
        let server = self.server.clone();
        let serving = stop.clone();
        let outcome = py.detach(|| {
            runtime().block_on(async move {
                // The stdio pipes register with the reactor: open them on the runtime.
                tokio::spawn(async move { server.serve_stdio_claimed(claim, serving).await }).await
            })
        });
        if let Some((ours, previous)) = ours {
            self.restore_loop(&ours, previous);
        }
        match outcome {
            Ok(result) => result.map_err(to_py_err),
            Err(join) => Err(PyValueError::new_err(format!(
                "the serve task failed: {join}"
            ))),
        }
    }

    /// Registers a resource (`template`: a resource template) read by `func(request) -> list`.
    #[pyo3(signature = (definition, func, template))]
    fn add_resource(
        &self,
        definition: &Bound<'_, PyAny>,
        func: Py<PyAny>,
        template: bool,
    ) -> PyResult<()> {
        let handler = ViaJson(PyJsonHandler {
            func: Arc::new(func),
            token_check: false,
        });
        let definition = to_json(definition)?;
        if template {
            let def = ResourceTemplate::from_json(definition).map_err(to_py_err)?;
            self.server
                .add_resource_template(def, handler)
                .map_err(to_py_err)
        } else {
            let def = Resource::from_json(definition).map_err(to_py_err)?;
            self.server.add_resource(def, handler).map_err(to_py_err)
        }
    }

    /// Registers a prompt rendered by `func(request) -> {"messages": [...]}`.
    fn add_prompt(&self, definition: &Bound<'_, PyAny>, func: Py<PyAny>) -> PyResult<()> {
        let def = Prompt::from_json(to_json(definition)?).map_err(to_py_err)?;
        let handler = ViaJson(PyJsonHandler {
            func: Arc::new(func),
            token_check: false,
        });
        self.server.add_prompt(def, handler).map_err(to_py_err)
    }

    /// What the server has done and is doing (see core's `Server::metrics`).
    fn metrics(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::convert::to_py(py, &self.server.metrics())
    }

    /// The metrics in the Prometheus text format.
    fn metrics_text(&self) -> String {
        self.server.metrics_text()
    }

    /// Puts a middleware around every request: `start(request, call)` starts it and returns
    /// at once; it reports through `call`. `name` names it in refusals and logs.
    fn add_middleware(&self, start: Py<PyAny>, name: &str) {
        self.server.add_middleware(AroundMiddleware::new(
            PyAround { start },
            format!("middleware {name}"),
            "call_next()",
        ));
    }

    /// Completes arguments of a prompt (`kind` "prompt") or template ("template").
    fn set_completer(&self, kind: &str, name: &str, func: Py<PyAny>) -> PyResult<()> {
        let reference = match kind {
            "prompt" => Reference::Prompt(name.to_owned()),
            "template" => Reference::ResourceTemplate(name.to_owned()),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown completion kind {other:?}"
                )));
            }
        };
        let completer = ViaJson(PyJsonHandler {
            func: Arc::new(func),
            token_check: false,
        });
        self.server
            .set_completer(reference, completer)
            .map_err(to_py_err)
    }

    fn remove_resource(&self, uri: &str) -> bool {
        self.server.remove_resource(uri) || self.server.remove_resource_template(uri)
    }

    fn remove_prompt(&self, name: &str) -> bool {
        self.server.remove_prompt(name)
    }

    fn notify_resource_updated(&self, uri: &str) {
        self.server.notify_resource_updated(uri);
    }

    /// Serves an MCP Apps view from its JSON form (core's `UiResource::from_json`).
    fn add_ui_resource(&self, definition: &Bound<'_, PyAny>) -> PyResult<()> {
        let view = toolwire::UiResource::from_json(to_json(definition)?).map_err(to_py_err)?;
        self.server.add_ui_resource(view).map_err(to_py_err)
    }

    /// Serves a skill at `path`: its SKILL.md and `files` (relative path → bytes).
    fn add_skill(
        &self,
        path: &str,
        skill_md: Vec<u8>,
        files: Vec<(String, Vec<u8>)>,
    ) -> PyResult<()> {
        let mut skill = toolwire::Skill::new(path, skill_md);
        for (relative, contents) in files {
            skill = skill.file(relative, contents);
        }
        self.server.add_skill(skill).map_err(to_py_err)
    }

    /// Serves (or serves again, changed) the skills under the directory `root`: how many.
    fn load_skills(&self, py: Python<'_>, root: std::path::PathBuf) -> PyResult<usize> {
        // Reading the tree is file I/O: the loop's other work goes on meanwhile.
        py.detach(|| self.server.load_skills(&root))
            .map_err(to_py_err)
    }

    /// `load_skills`, then again whenever the tree changes (polled every `interval_ms`).
    fn watch_skills(
        &self,
        py: Python<'_>,
        root: std::path::PathBuf,
        interval_ms: u64,
    ) -> PyResult<usize> {
        py.detach(|| {
            self.server
                .watch_skills(&root, Duration::from_millis(interval_ms))
        })
        .map_err(to_py_err)
    }

    fn remove_skill(&self, path_or_uri: &str) -> bool {
        self.server.remove_skill(path_or_uri)
    }

    /// Sets the rule of who sees what: `func({"viewer", "items"}) -> {"visible": [bool]}`, run on
    /// the threads token checks run on (never queued behind sync handlers).
    fn visible_when(&self, func: Py<PyAny>) {
        self.server.visible_when(ViaJson(PyJsonHandler {
            func: Arc::new(func),
            token_check: true,
        }));
    }

    /// What the rule decides from changed: sessions check again (see core).
    fn visibility_changed(&self) {
        self.server.visibility_changed();
    }

    /// Offers the tools through a search (`settings`: core's `ToolSearch` JSON), or lists
    /// them all again (`None`).
    #[pyo3(signature = (settings))]
    fn tool_search(&self, settings: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let search = match settings {
            None => None,
            Some(settings) => {
                Some(toolwire::ToolSearch::from_json(&to_json(settings)?).map_err(to_py_err)?)
            }
        };
        self.server.tool_search(search).map_err(to_py_err)
    }

    /// Mounts another server's catalog under `prefix`: `inner` (a server in this process) or
    /// `settings` (`{"command", "args", "env", "cwd"}` or `{"url", "headers"}`). Connects
    /// before it returns, without the GIL.
    #[pyo3(signature = (prefix, inner=None, settings=None, protocol_version=None))]
    fn mount(
        &self,
        py: Python<'_>,
        prefix: &str,
        inner: Option<PyRef<'_, NativeServer>>,
        settings: Option<&Bound<'_, PyAny>>,
        protocol_version: Option<String>,
    ) -> PyResult<crate::compose::NativeMount> {
        let upstream = match (inner, settings) {
            (Some(inner), None) => toolwire::compose::Upstream::Server(inner.server.clone()),
            (None, Some(settings)) => {
                toolwire::compose::Upstream::from_json(&to_json(settings)?).map_err(to_py_err)?
            }
            _ => {
                return Err(PyValueError::new_err(
                    "mount takes a server, or the settings of one to spawn or reach",
                ));
            }
        };
        let server = self.server.clone();
        let prefix = prefix.to_owned();
        let mut options = toolwire::compose::MountOptions::default();
        options.protocol_version = protocol_version;
        let mount = py
            .detach(|| {
                runtime()
                    .block_on(async move { server.mount_with(&prefix, upstream, options).await })
            })
            .map_err(to_py_err)?;
        Ok(crate::compose::NativeMount { mount })
    }

    /// Declares an extension the server serves (`capabilities.extensions[id] = settings`).
    fn declare_extension(&self, id: &str, settings: &Bound<'_, PyAny>) -> PyResult<()> {
        self.server
            .declare_extension(id, to_json(settings)?)
            .map_err(to_py_err)
    }

    /// Serves Streamable HTTP on `host:port` and returns its handle once listening; `async def`
    /// tools run on the bridge's loop. `stop()` of this server ends it too.
    #[pyo3(signature = (bridge, host, port, path, stateless, response_mode, json_response, allowed_hosts,
                        allowed_origins, max_sessions, max_sessions_per_client, session_idle_timeout_ms,
                        header_read_timeout_ms, body_read_timeout_ms, max_connections, max_sse_buffered_bytes,
                        token_validator, authorization_servers, resource_url, metrics_path=None))]
    #[expect(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
    fn serve_http(
        &self,
        py: Python<'_>,
        bridge: &LoopBridge,
        host: &str,
        port: u16,
        path: String,
        stateless: bool,
        response_mode: Option<String>,
        json_response: bool,
        allowed_hosts: Vec<String>,
        allowed_origins: Vec<String>,
        max_sessions: Option<usize>,
        max_sessions_per_client: Option<usize>,
        session_idle_timeout_ms: Option<u64>,
        header_read_timeout_ms: Option<u64>,
        body_read_timeout_ms: Option<u64>,
        max_connections: Option<usize>,
        max_sse_buffered_bytes: Option<usize>,
        token_validator: Option<Py<PyAny>>,
        authorization_servers: Vec<String>,
        resource_url: Option<String>,
        metrics_path: Option<String>,
    ) -> PyResult<NativeHttpServer> {
        let settings = HttpSettings {
            path: Some(path.clone()),
            stateless,
            response_mode: None,
            json_response,
            allowed_hosts,
            allowed_origins,
            max_sessions,
            max_sessions_per_client,
            session_idle_timeout_ms,
            header_read_timeout_ms,
            body_read_timeout_ms,
            max_connections,
            max_sse_buffered_bytes,
            metrics_path,
        };
        let options = http_options(
            settings,
            response_mode,
            token_validator,
            authorization_servers,
            resource_url,
        )?;
        self.set_loop(Some(bridge.handle()));
        let address = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let server = self.server.clone();
        let started = py.detach(|| {
            runtime().block_on(async move { server.serve_http(&address, options).await })
        });
        let http = started.map_err(to_py_err)?;
        let url = format!("http://{}{path}", http.local_addr());
        let stop = http.stop_token();
        Ok(NativeHttpServer {
            url,
            stop,
            server: std::sync::Mutex::new(Some(http)),
        })
    }

    /// Streamable HTTP for an app of the caller's own (the ASGI app): answers requests it is
    /// handed; `async def` tools run on the bridge's loop. Options as for `serve_http`, less
    /// the listener's.
    #[pyo3(signature = (bridge, path, stateless, response_mode, json_response, allowed_hosts,
                        allowed_origins, max_sessions, max_sessions_per_client, session_idle_timeout_ms,
                        body_read_timeout_ms, max_sse_buffered_bytes, token_validator,
                        authorization_servers, resource_url))]
    #[expect(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
    fn http_endpoint(
        &self,
        py: Python<'_>,
        bridge: &LoopBridge,
        path: String,
        stateless: bool,
        response_mode: Option<String>,
        json_response: bool,
        allowed_hosts: Vec<String>,
        allowed_origins: Vec<String>,
        max_sessions: Option<usize>,
        max_sessions_per_client: Option<usize>,
        session_idle_timeout_ms: Option<u64>,
        body_read_timeout_ms: Option<u64>,
        max_sse_buffered_bytes: Option<usize>,
        token_validator: Option<Py<PyAny>>,
        authorization_servers: Vec<String>,
        resource_url: Option<String>,
    ) -> PyResult<NativeHttpEndpoint> {
        let settings = HttpSettings {
            path: Some(path),
            stateless,
            response_mode: None,
            json_response,
            allowed_hosts,
            allowed_origins,
            max_sessions,
            max_sessions_per_client,
            session_idle_timeout_ms,
            header_read_timeout_ms: None,
            body_read_timeout_ms,
            max_connections: None,
            max_sse_buffered_bytes,
            metrics_path: None,
        };
        let options = http_options(
            settings,
            response_mode,
            token_validator,
            authorization_servers,
            resource_url,
        )?;
        self.set_loop(Some(bridge.handle()));
        let server = self.server.clone();
        let endpoint = py.detach(|| {
            let _entered = runtime().enter();
            server.http_endpoint(options)
        });
        Ok(NativeHttpEndpoint {
            endpoint: Arc::new(endpoint.map_err(to_py_err)?),
            bridge: bridge.handle(),
        })
    }

    /// From now on, `async def` tools run on this bridge's loop.
    fn use_bridge(&self, bridge: &LoopBridge) {
        self.set_loop(Some(bridge.handle()));
    }

    /// Core's in-process client on a new session (`toolwire.testing`); `async def` tools run on
    /// the bridge's loop. `ask` answers the server's questions, `done` hears the handshake's
    /// outcome (see `client.rs`).
    fn client(
        &self,
        bridge: &LoopBridge,
        options: &str,
        ask: Py<PyAny>,
        done: Py<PyAny>,
    ) -> PyResult<NativeClient> {
        self.set_loop(Some(bridge.handle()));
        let (session, outbound) = Session::with_runtime(&self.server, runtime().handle().clone());
        NativeClient::connect(session, outbound, options, ask, done)
    }

    /// Replays one golden wire vector case (JSON) on a new session, blocking without the GIL;
    /// returns why it failed, or `None`. `async def` tools run on the bridge's loop.
    fn replay_vector(
        &self,
        py: Python<'_>,
        bridge: &LoopBridge,
        case: &str,
    ) -> PyResult<Option<String>> {
        let case: serde_json::Value = serde_json::from_str(case)
            .map_err(|err| PyValueError::new_err(format!("a vector case must be JSON: {err}")))?;
        self.set_loop(Some(bridge.handle()));
        let (session, outbound) = Session::with_runtime(&self.server, runtime().handle().clone());
        let wire = SessionWire::new(session, outbound);
        Ok(py.detach(|| runtime().block_on(vectors::replay(wire, &case)).err()))
    }

    /// Sets the lifespan's hooks (an object with `start(done)` and `stop(done)`; see
    /// `toolwire._base.Lifespan`), or takes them away.
    #[pyo3(signature = (hooks=None))]
    fn set_lifespan(&self, hooks: Option<Py<PyAny>>) {
        self.server
            .set_lifespan(hooks.map(crate::lifespan::PyLifespan::shared));
    }

    /// Holds the lifespan (started first): `done(hold, error)` is called on an engine thread.
    fn hold_lifespan(&self, done: Py<PyAny>) {
        crate::lifespan::hold(&self.server, done);
    }

    /// A session for a transport of the caller's own; `async def` tools run on the bridge's loop.
    fn session(&self, bridge: &LoopBridge) -> NativeSession {
        self.set_loop(Some(bridge.handle()));
        let (session, outbound) = Session::with_runtime(&self.server, runtime().handle().clone());
        NativeSession {
            session,
            outbound: tokio::sync::Mutex::new(outbound),
        }
    }
}

/// The endpoint's options from the Python keywords (shared by `serve_http` and the ASGI app).
fn http_options(
    mut settings: HttpSettings,
    response_mode: Option<String>,
    token_validator: Option<Py<PyAny>>,
    authorization_servers: Vec<String>,
    resource_url: Option<String>,
) -> PyResult<HttpOptions> {
    settings.response_mode = response_mode
        .as_deref()
        .map(ResponseMode::parse)
        .transpose()
        .map_err(to_py_err)?;
    let mut options = settings.into_options().map_err(to_py_err)?;
    if let Some(func) = token_validator {
        let mut auth = BearerAuth::new(
            ViaJson(PyJsonHandler {
                func: Arc::new(func),
                token_check: true,
            }),
            authorization_servers.first().cloned().unwrap_or_default(),
        );
        auth.authorization_servers = authorization_servers;
        auth.resource = resource_url;
        options.auth = Some(auth);
    }
    Ok(options)
}

impl NativeServer {
    fn set_loop(&self, bridge: Option<BridgeHandle>) {
        *self.bridge.lock().unwrap_or_else(|e| e.into_inner()) = bridge;
    }

    fn swap_loop(&self, bridge: Option<BridgeHandle>) -> Option<BridgeHandle> {
        std::mem::replace(
            &mut *self.bridge.lock().unwrap_or_else(|e| e.into_inner()),
            bridge,
        )
    }

    /// Puts `previous` back unless another serve took the slot since `ours` went in.
    fn restore_loop(&self, ours: &BridgeHandle, previous: Option<BridgeHandle>) {
        let mut slot = self.bridge.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|current| current.same(ours)) {
            *slot = previous;
        }
    }
}

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeSession {
    session: Session,
    outbound: tokio::sync::Mutex<Outbound>,
}

#[pymethods]
impl NativeSession {
    /// Feeds one inbound frame (a JSON text without the line terminator).
    fn handle_frame(&self, py: Python<'_>, frame: &[u8]) {
        let session = &self.session;
        py.detach(|| session.handle_frame(frame));
    }

    /// The next outbound frame, or `None` after `timeout` seconds or once the session ended.
    #[pyo3(signature = (timeout=10.0))]
    fn recv(&self, py: Python<'_>, timeout: f64) -> Option<String> {
        let wait = Duration::from_secs_f64(timeout.max(0.0));
        py.detach(|| {
            runtime().block_on(async {
                let mut outbound = self.outbound.lock().await;
                tokio::time::timeout(wait, outbound.recv())
                    .await
                    .ok()
                    .flatten()
            })
        })
    }

    /// Ends the session at once: every call is cancelled and nothing more is sent. Returns
    /// once the calls have ended (their `async def` tasks told to cancel).
    fn close(&self, py: Python<'_>) {
        let session = self.session.clone();
        py.detach(|| {
            session.close();
            // After `close`, this only waits for the cancelled calls to end.
            runtime().block_on(async move { session.shutdown().await });
        });
    }

    /// Ends the input: calls in flight get the drain time, then the outbound stream ends.
    fn shutdown(&self, py: Python<'_>) {
        let session = self.session.clone();
        py.detach(|| runtime().block_on(async move { session.shutdown().await }));
    }

    /// The negotiated protocol version, once initialized.
    #[getter]
    fn protocol_version(&self) -> Option<&'static str> {
        self.session.protocol_version().map(|v| v.as_str())
    }
}

/// Ends one serve (`serve_stdio`'s `stop`) from any thread, leaving the server's others alone.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct StopSignal {
    token: CancellationToken,
}

#[pymethods]
impl StopSignal {
    #[new]
    fn new() -> Self {
        StopSignal {
            token: CancellationToken::new(),
        }
    }

    fn stop(&self) {
        self.token.cancel();
    }
}
