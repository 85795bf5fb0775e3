//! `NativeHttpServer`: a running Streamable HTTP server for the JS `HttpServer` wrapper.

use std::sync::Arc;

use napi::bindgen_prelude::{Function, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use toolwire::host::{HttpSettings, ViaJson};
use toolwire::transport::http::{BearerAuth, HttpOptions, ResponseMode};
use toolwire::{CancellationToken, Server};

use crate::catalog::{JsJsonHandler, JsonArgs};
use crate::runtime::runtime;

#[napi(object)]
pub struct HttpInit {
    pub host: String,
    pub port: u32,
    pub path: Option<String>,
    pub stateless: Option<bool>,
    /// `"auto"`, `"json"` or `"sse"`.
    pub response_mode: Option<String>,
    pub json_response: Option<bool>,
    pub allowed_hosts: Option<Vec<String>>,
    pub allowed_origins: Option<Vec<String>>,
    pub max_sessions: Option<u32>,
    pub max_sessions_per_client: Option<u32>,
    /// 0 turns reaping off.
    pub session_idle_timeout_ms: Option<u32>,
    /// 0: no limit.
    pub header_read_timeout_ms: Option<u32>,
    /// 0: no limit.
    pub body_read_timeout_ms: Option<u32>,
    pub max_connections: Option<u32>,
    pub max_sse_buffered_bytes: Option<u32>,
    pub authorization_servers: Option<Vec<String>>,
    pub resource_url: Option<String>,
    pub metrics_path: Option<String>,
}

/// The bearer-token check of an HTTP endpoint: the JS validator and what the OAuth protected
/// resource metadata names.
pub(crate) struct AuthInit<'a> {
    pub(crate) validator: Option<Function<'a, JsonArgs, Unknown<'static>>>,
    pub(crate) authorization_servers: Option<Vec<String>>,
    pub(crate) resource_url: Option<String>,
}

/// The endpoint's options (shared by `serveHttp` and the mounted endpoint): core's, or the
/// engine's error (a refused option); the outer error is napi's own.
pub(crate) fn http_options(
    mut settings: HttpSettings,
    response_mode: Option<String>,
    auth: AuthInit<'_>,
) -> napi::Result<Result<HttpOptions, toolwire::Error>> {
    settings.response_mode = match response_mode.as_deref().map(ResponseMode::parse) {
        None => None,
        Some(Ok(mode)) => Some(mode),
        Some(Err(err)) => return Ok(Err(err)),
    };
    let mut options = match settings.into_options() {
        Ok(options) => options,
        Err(err) => return Ok(Err(err)),
    };
    if let Some(validator) = auth.validator {
        let servers = auth.authorization_servers.unwrap_or_default();
        let mut bearer = BearerAuth::new(
            ViaJson(JsJsonHandler::new(&validator)?),
            servers.first().cloned().unwrap_or_default(),
        );
        bearer.authorization_servers = servers;
        bearer.resource = auth.resource_url;
        options.auth = Some(bearer);
    }
    Ok(Ok(options))
}

#[napi]
pub struct NativeHttpServer {
    url: String,
    stop: CancellationToken,
}

impl NativeHttpServer {
    /// Starts serving: the running server, or the engine's error (a refused option, a port in
    /// use); the outer error is napi's own.
    pub(crate) fn start(
        server: &Server,
        init: HttpInit,
        token_validator: Option<Function<'_, JsonArgs, Unknown<'static>>>,
        on_stopped: &Function<'_, (), ()>,
    ) -> napi::Result<Result<Self, toolwire::Error>> {
        let Ok(port) = u16::try_from(init.port) else {
            return Ok(Err(toolwire::Error::InvalidArgument(format!(
                "invalid port {}",
                init.port
            ))));
        };
        let settings = HttpSettings {
            path: init.path,
            stateless: init.stateless.unwrap_or(false),
            response_mode: None,
            json_response: init.json_response.unwrap_or(false),
            allowed_hosts: init.allowed_hosts.unwrap_or_default(),
            allowed_origins: init.allowed_origins.unwrap_or_default(),
            max_sessions: init.max_sessions.map(|limit| limit as usize),
            max_sessions_per_client: init.max_sessions_per_client.map(|limit| limit as usize),
            session_idle_timeout_ms: init.session_idle_timeout_ms.map(u64::from),
            header_read_timeout_ms: init.header_read_timeout_ms.map(u64::from),
            body_read_timeout_ms: init.body_read_timeout_ms.map(u64::from),
            max_connections: init.max_connections.map(|limit| limit as usize),
            max_sse_buffered_bytes: init.max_sse_buffered_bytes.map(|bytes| bytes as usize),
            metrics_path: init.metrics_path,
        };
        let auth = AuthInit {
            validator: token_validator,
            authorization_servers: init.authorization_servers,
            resource_url: init.resource_url,
        };
        let options = match http_options(settings, init.response_mode, auth)? {
            Ok(options) => options,
            Err(err) => return Ok(Err(err)),
        };
        let path = options.path.clone();
        let address = if init.host.contains(':') {
            format!("[{}]:{port}", init.host)
        } else {
            format!("{}:{port}", init.host)
        };
        // Not weak: a serving HTTP server keeps the process alive until it stops.
        let stopped = Arc::new(
            on_stopped
                .build_threadsafe_function::<()>()
                .callee_handled::<false>()
                .build()?,
        );
        let server = server.clone();
        let http = runtime().block_on(async move {
            server
                .serve_http(&address, options)
                .await
                .map_err(|err| match err {
                    // Which address could not be bound: the OS's message does not say.
                    toolwire::Error::Transport(io) => {
                        toolwire::Error::Transport(std::io::Error::new(
                            io.kind(),
                            format!("cannot serve HTTP on {address}: {io}"),
                        ))
                    }
                    other => other,
                })
        });
        let http = match http {
            Ok(http) => http,
            Err(err) => return Ok(Err(err)),
        };
        let url = format!("http://{}{path}", http.local_addr());
        let stop = http.stop_token();
        runtime().spawn(async move {
            http.wait().await;
            stopped.call((), ThreadsafeFunctionCallMode::NonBlocking);
        });
        Ok(Ok(NativeHttpServer { url, stop }))
    }
}

#[napi]
impl NativeHttpServer {
    /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops accepting; sessions drain their calls, then `on_stopped` runs.
    #[napi]
    pub fn close(&self) {
        self.stop.cancel();
    }
}
