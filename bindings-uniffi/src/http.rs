//! Streamable HTTP: the options record, the running server, and a bearer-token validator
//! written in Kotlin or Swift.

use std::sync::{Arc, Mutex};

use toolwire::CancellationToken;
use toolwire::host::HttpSettings;
use toolwire::transport::http::{
    AuthRejection, BearerAuth, HttpOptions, ResponseMode, TokenInfo, TokenValidator,
};

use crate::errors::ToolwireError;
use crate::runtime::{on_runtime, runtime};

/// Settings of `Server.serveHttp`. Host and Origin are checked by default (loopback names on
/// a loopback host).
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct HttpServerOptions {
    /// The endpoint path (default `/mcp`).
    #[uniffi(default = None)]
    pub path: Option<String>,
    /// No sessions: each POST stands alone; requests to the client fail at once.
    #[uniffi(default = false)]
    pub stateless: bool,
    /// How requests are answered (default `AUTO`).
    #[uniffi(default = None)]
    pub response_mode: Option<HttpResponseMode>,
    /// The official SDKs' name for the `JSON` response mode.
    #[uniffi(default = false)]
    pub json_response: bool,
    /// Accepted `Host` values (empty: the default rule).
    #[uniffi(default = [])]
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (empty: the default rule).
    #[uniffi(default = [])]
    pub allowed_origins: Vec<String>,
    /// Live sessions at most (default 10,000). A full server makes room by ending the least
    /// recently used idle session of the client holding the most sessions (never leaving it
    /// with fewer than the newcomer's client), or of the newcomer's own client; with none, 503.
    #[uniffi(default = None)]
    pub max_sessions: Option<u32>,
    /// Live sessions one client may hold (default 1,000): the token's subject, or without
    /// tokens the peer's address (behind a reverse proxy, the proxy: raise it there). A client
    /// at its limit loses its least recently used idle session to a new one, or gets 429.
    #[uniffi(default = None)]
    pub max_sessions_per_client: Option<u32>,
    /// Idle sessions end after this many milliseconds (default 1 hour; 0: never).
    #[uniffi(default = None)]
    pub session_idle_timeout_ms: Option<u64>,
    /// Milliseconds a client may take to send a request's head, and how long a kept-alive
    /// connection may idle (default 30 s; 0: no limit).
    #[uniffi(default = None)]
    pub header_read_timeout_ms: Option<u64>,
    /// Milliseconds a client may take to send a request's body, then 408 (default 30 s; 0: no
    /// limit).
    #[uniffi(default = None)]
    pub body_read_timeout_ms: Option<u64>,
    /// Open connections at most (default 10,000); one more is answered 503.
    #[uniffi(default = None)]
    pub max_connections: Option<u32>,
    /// Bytes that may wait for one slow SSE reader (default 1 MiB); past it the connection is
    /// let go with a `retry:` hint, and the stream is resumed with `Last-Event-ID`.
    #[uniffi(default = None)]
    pub max_sse_buffered_bytes: Option<u32>,
    /// The authorization servers named in the protected-resource metadata (with a validator).
    #[uniffi(default = [])]
    pub authorization_servers: Vec<String>,
    /// This server's canonical URL (the tokens' audience).
    #[uniffi(default = None)]
    pub resource_url: Option<String>,
    /// Serve `metricsText()` to `GET` on this path (e.g. `/metrics`) for Prometheus; Host and
    /// Origin are checked, no token is asked for (default: not served).
    #[uniffi(default = None)]
    pub metrics_path: Option<String>,
}

/// How a Streamable HTTP server answers requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum HttpResponseMode {
    /// One JSON body when the answer is ready at once, an SSE stream otherwise.
    Auto,
    /// Always one JSON body.
    Json,
    /// Always an SSE stream.
    Sse,
}

impl From<HttpResponseMode> for ResponseMode {
    fn from(mode: HttpResponseMode) -> Self {
        match mode {
            HttpResponseMode::Auto => ResponseMode::Auto,
            HttpResponseMode::Json => ResponseMode::Json,
            HttpResponseMode::Sse => ResponseMode::Sse,
        }
    }
}

/// What a valid bearer token grants.
#[derive(Clone, Debug, uniffi::Record)]
pub struct TokenGrant {
    /// Who it was issued to; a session is bound to the subject that opened it.
    #[uniffi(default = None)]
    pub subject: Option<String>,
    /// The scopes granted.
    #[uniffi(default = [])]
    pub scopes: Vec<String>,
    /// What the holder is (roles, groups, plans): matched against the tags a tool, resource
    /// or prompt requires.
    #[uniffi(default = [])]
    pub tags: Vec<String>,
}

/// A validator's answer about one bearer token.
#[derive(Clone, Debug, uniffi::Enum)]
pub enum TokenVerdict {
    /// The token is valid and grants this.
    Granted {
        /// What it grants.
        grant: TokenGrant,
    },
    /// The token is not valid for this server (401 `invalid_token`).
    Invalid,
    /// The token is valid but lacks `scope` (403 `insufficient_scope`).
    InsufficientScope {
        /// The scope the request needs.
        scope: String,
    },
}

/// Checks bearer tokens; runs on a pool thread, so it may block (e.g. to ask an
/// introspection endpoint).
#[uniffi::export(with_foreign)]
pub trait BearerTokenValidator: Send + Sync {
    /// What `token` grants, or why it is refused.
    fn validate(&self, token: String) -> TokenVerdict;
}

struct ForeignValidator(Arc<dyn BearerTokenValidator>);

#[async_trait::async_trait]
impl TokenValidator for ForeignValidator {
    async fn validate(&self, token: &str) -> Result<TokenInfo, AuthRejection> {
        let validator = self.0.clone();
        let token = token.to_owned();
        match runtime()
            .spawn_blocking(move || validator.validate(token))
            .await
        {
            Ok(TokenVerdict::Granted { grant }) => {
                Ok(TokenInfo::new(grant.subject, grant.scopes).tags(grant.tags))
            }
            Ok(TokenVerdict::Invalid) => Err(AuthRejection::invalid_token("invalid token")),
            Ok(TokenVerdict::InsufficientScope { scope }) => {
                Err(AuthRejection::insufficient_scope(scope))
            }
            Err(err) => {
                tracing::warn!(%err, "the token validator failed; refusing the token");
                Err(AuthRejection::invalid_token(
                    "the token could not be validated",
                ))
            }
        }
    }
}

/// The options the listener's server and a mounted endpoint share.
pub(crate) struct EndpointSettings {
    pub(crate) path: Option<String>,
    pub(crate) stateless: bool,
    pub(crate) response_mode: Option<HttpResponseMode>,
    pub(crate) json_response: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_sessions: Option<u32>,
    pub(crate) max_sessions_per_client: Option<u32>,
    pub(crate) session_idle_timeout_ms: Option<u64>,
    pub(crate) body_read_timeout_ms: Option<u64>,
    pub(crate) max_sse_buffered_bytes: Option<u32>,
}

/// Core's settings from the shared options (no listener limits).
pub(crate) fn endpoint_settings(options: EndpointSettings) -> HttpSettings {
    HttpSettings {
        path: options.path,
        stateless: options.stateless,
        response_mode: options.response_mode.map(ResponseMode::from),
        json_response: options.json_response,
        allowed_hosts: options.allowed_hosts,
        allowed_origins: options.allowed_origins,
        max_sessions: options.max_sessions.map(|limit| limit as usize),
        max_sessions_per_client: options.max_sessions_per_client.map(|limit| limit as usize),
        session_idle_timeout_ms: options.session_idle_timeout_ms,
        header_read_timeout_ms: None,
        body_read_timeout_ms: options.body_read_timeout_ms,
        max_connections: None,
        max_sse_buffered_bytes: options.max_sse_buffered_bytes.map(|bytes| bytes as usize),
        metrics_path: None,
    }
}

/// Requires a bearer token `validator` accepts on every request, when there is one.
pub(crate) fn with_validator(
    mut http: HttpOptions,
    validator: Option<Arc<dyn BearerTokenValidator>>,
    authorization_servers: Vec<String>,
    resource_url: Option<String>,
) -> HttpOptions {
    if let Some(validator) = validator {
        let mut auth = BearerAuth::new(
            ForeignValidator(validator),
            authorization_servers.first().cloned().unwrap_or_default(),
        );
        auth.authorization_servers = authorization_servers;
        auth.resource = resource_url;
        http.auth = Some(auth);
    }
    http
}

/// A running Streamable HTTP server.
#[derive(uniffi::Object)]
pub struct HttpServer {
    url: String,
    stop: CancellationToken,
    server: Mutex<Option<toolwire::transport::http::HttpServer>>,
}

impl HttpServer {
    pub(crate) fn start(
        server: &toolwire::Server,
        host: String,
        port: u16,
        options: HttpServerOptions,
        validator: Option<Arc<dyn BearerTokenValidator>>,
    ) -> Result<Arc<Self>, ToolwireError> {
        let http = HttpSettings {
            header_read_timeout_ms: options.header_read_timeout_ms,
            max_connections: options.max_connections.map(|limit| limit as usize),
            metrics_path: options.metrics_path,
            ..endpoint_settings(EndpointSettings {
                path: options.path,
                stateless: options.stateless,
                response_mode: options.response_mode,
                json_response: options.json_response,
                allowed_hosts: options.allowed_hosts,
                allowed_origins: options.allowed_origins,
                max_sessions: options.max_sessions,
                max_sessions_per_client: options.max_sessions_per_client,
                session_idle_timeout_ms: options.session_idle_timeout_ms,
                body_read_timeout_ms: options.body_read_timeout_ms,
                max_sse_buffered_bytes: options.max_sse_buffered_bytes,
            })
        };
        let http = with_validator(
            http.into_options()?,
            validator,
            options.authorization_servers,
            options.resource_url,
        );
        let path = http.path.clone();
        let address = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let server = server.clone();
        let running = runtime().block_on(async move { server.serve_http(&address, http).await })?;
        Ok(Arc::new(HttpServer {
            url: format!("http://{}{path}", running.local_addr()),
            stop: running.stop_token(),
            server: Mutex::new(Some(running)),
        }))
    }

    fn take(&self) -> Option<toolwire::transport::http::HttpServer> {
        self.server.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[uniffi::export]
impl HttpServer {
    /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops accepting; sessions drain their calls and end (see `wait`).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Suspends until the server has stopped and its sessions ended.
    pub async fn wait(&self) -> Result<(), ToolwireError> {
        if let Some(server) = self.take() {
            on_runtime(async move { server.wait().await }).await?;
        }
        Ok(())
    }

    /// `wait`, blocking the calling thread.
    pub fn wait_blocking(&self) {
        if let Some(server) = self.take() {
            runtime().block_on(server.wait());
        }
    }
}
