//! `HttpEndpoint` and `HttpExchange`: core's mountable Streamable HTTP endpoint, for a web
//! server of the app's own (the Kotlin wrapper's Ktor route, `Ktor.kt`). Only types are
//! converted here: the request head and body chunks in, the response head and body chunks out,
//! and the client's hanging up.

use std::net::IpAddr;
use std::sync::Arc;

use crate::errors::ToolwireError;
use crate::http::{
    BearerTokenValidator, EndpointSettings, HttpResponseMode, endpoint_settings, with_validator,
};
use crate::runtime::{on_runtime, runtime};

/// Settings of `Server.httpEndpoint`: those of `serveHttp` less the listener's (the app's web
/// server owns connections and head timeouts). Unless `allowed_hosts` names the app's host
/// names, only loopback `Host` values pass; `path` is not matched (the app routes requests
/// here), it names the endpoint in the protected-resource metadata.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct HttpEndpointOptions {
    /// The endpoint's path, for the protected-resource metadata (default `/mcp`).
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
    /// Accepted `Host` values (empty: loopback names only).
    #[uniffi(default = [])]
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (empty: the default rule).
    #[uniffi(default = [])]
    pub allowed_origins: Vec<String>,
    /// Live sessions at most (default 10,000), as for `serveHttp`.
    #[uniffi(default = None)]
    pub max_sessions: Option<u32>,
    /// Live sessions one client may hold (default 1,000), as for `serveHttp`.
    #[uniffi(default = None)]
    pub max_sessions_per_client: Option<u32>,
    /// Idle sessions end after this many milliseconds (default 1 hour; 0: never).
    #[uniffi(default = None)]
    pub session_idle_timeout_ms: Option<u64>,
    /// Milliseconds a client may take to send a request's body, then 408 (default 30 s; 0: no
    /// limit).
    #[uniffi(default = None)]
    pub body_read_timeout_ms: Option<u64>,
    /// Bytes that may wait for one slow SSE reader (default 1 MiB), as for `serveHttp`.
    #[uniffi(default = None)]
    pub max_sse_buffered_bytes: Option<u32>,
    /// The authorization servers named in the protected-resource metadata (with a validator).
    #[uniffi(default = [])]
    pub authorization_servers: Vec<String>,
    /// This server's canonical URL (the tokens' audience).
    #[uniffi(default = None)]
    pub resource_url: Option<String>,
}

/// One header field of a request or a response.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct HttpHeader {
    /// The field name.
    pub name: String,
    /// The field value.
    pub value: String,
}

/// A response's status and header fields, and its body when it is complete (`content-length`
/// is then among the fields); `null`/`nil`: it streams through `nextChunk`.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct HttpResponseHead {
    /// The status code.
    pub status: u16,
    /// The header fields, in order (a name may repeat).
    pub headers: Vec<HttpHeader>,
    /// The whole body, when complete.
    #[uniffi(default = None)]
    pub body: Option<Vec<u8>>,
}

impl From<toolwire::transport::http::ResponseHead> for HttpResponseHead {
    fn from(head: toolwire::transport::http::ResponseHead) -> Self {
        HttpResponseHead {
            status: head.status,
            headers: head
                .headers
                .into_iter()
                .map(|(name, value)| HttpHeader {
                    name,
                    value: String::from_utf8_lossy(&value).into_owned(),
                })
                .collect(),
            body: head.body.map(Vec::from),
        }
    }
}

/// Streamable HTTP answered inside a web server of the app's own: hand it each request routed
/// to the MCP path (`exchange`) and send back what the exchange answers. Sessions, SSE and
/// resumption, the 2026-07-28 exchanges, the Host/Origin guard, tokens and limits are the
/// engine's, as for `serveHttp`.
#[derive(uniffi::Object)]
pub struct HttpEndpoint {
    endpoint: Arc<toolwire::transport::http::HttpEndpoint>,
}

impl HttpEndpoint {
    pub(crate) fn start(
        server: &toolwire::Server,
        options: HttpEndpointOptions,
        validator: Option<Arc<dyn BearerTokenValidator>>,
    ) -> Result<Arc<Self>, ToolwireError> {
        let http = endpoint_settings(EndpointSettings {
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
        });
        let http = with_validator(
            http.into_options()?,
            validator,
            options.authorization_servers,
            options.resource_url,
        );
        let endpoint = {
            let _entered = runtime().enter();
            server.http_endpoint(http)?
        };
        Ok(Arc::new(HttpEndpoint {
            endpoint: Arc::new(endpoint),
        }))
    }

    /// Core's endpoint, for the Kotlin route's whole-body path (`jvm_mount`).
    pub(crate) fn core(&self) -> &toolwire::transport::http::HttpEndpoint {
        &self.endpoint
    }
}

#[uniffi::export]
impl HttpEndpoint {
    /// Starts answering one request: its method, target (path and query), header fields and
    /// the client's address (an IP address; `null`/`nil` when unknown). The body follows
    /// through the exchange's `sendBody`; a bad method or header is `InvalidArgument`.
    #[uniffi::method(default(peer = None))]
    pub fn exchange(
        &self,
        method: String,
        target: String,
        headers: Vec<HttpHeader>,
        peer: Option<String>,
    ) -> Result<Arc<HttpExchange>, ToolwireError> {
        let fields = headers
            .iter()
            .map(|field| (field.name.as_bytes(), field.value.as_bytes()));
        let peer = peer.and_then(|peer| peer.parse::<IpAddr>().ok());
        let exchange = self.endpoint.exchange(&method, &target, fields, peer)?;
        Ok(Arc::new(HttpExchange { exchange }))
    }

    /// Answers one request whose body the app holds whole (empty: none): complete at once when
    /// it needs no handler of the app's (`completeResponse`), else as `exchange`'s answer. A
    /// bad method or header is `InvalidArgument`.
    #[uniffi::method(default(peer = None))]
    pub fn answer(
        &self,
        method: String,
        target: String,
        headers: Vec<HttpHeader>,
        body: Vec<u8>,
        peer: Option<String>,
    ) -> Result<Arc<HttpExchange>, ToolwireError> {
        let fields = headers
            .iter()
            .map(|field| (field.name.as_bytes(), field.value.as_bytes()));
        let peer = peer.and_then(|peer| peer.parse::<IpAddr>().ok());
        // Called from the app's own thread: a queued tool's handler may start right here.
        let exchange = crate::queue::on_host_thread(|| {
            self.endpoint
                .answer(&method, &target, fields, body.into(), peer)
        })?;
        Ok(Arc::new(HttpExchange { exchange }))
    }

    /// Bodies up to this many bytes may be read whole before `answer` when the request says its
    /// length (the engine's rule); larger or chunked ones go through `exchange` as they come.
    pub fn whole_body_bytes(&self) -> u32 {
        u32::try_from(self.endpoint.whole_body_bytes()).unwrap_or(u32::MAX)
    }

    /// Ends every session (their calls in flight finish first, each within the server's drain
    /// time). Requests answered afterwards find no session.
    pub async fn shutdown(&self) {
        let endpoint = self.endpoint.clone();
        let _ = on_runtime(async move { endpoint.shutdown().await }).await;
    }
}

/// One request being answered by an `HttpEndpoint`: the body goes in chunk by chunk, the
/// response head and body chunks come out. `hangUp()` when the client went away. (Core's
/// `HttpExchange`; freeing it hangs up too.)
#[derive(uniffi::Object)]
pub struct HttpExchange {
    exchange: toolwire::transport::http::HttpExchange,
}

impl HttpExchange {
    /// Core's exchange, as the object the bindings hand out.
    pub(crate) fn wrap(exchange: toolwire::transport::http::HttpExchange) -> Arc<Self> {
        Arc::new(HttpExchange { exchange })
    }
}

#[uniffi::export]
impl HttpExchange {
    /// Hands over one chunk of the request body, suspending while the engine has not taken
    /// the ones before (backpressure); false when it reads no more of the body (it answered
    /// already, e.g. 413), or after `endBody`/`abortBody`.
    pub async fn send_body(&self, chunk: Vec<u8>) -> bool {
        self.exchange.send_body(chunk.into()).await
    }

    /// Hands over one chunk of the request body if the engine has room for it now: whether it
    /// took it (false: it reads no more), or `null`/`nil` when it has none (then `sendBody`).
    pub fn try_send_body(&self, chunk: Vec<u8>) -> Option<bool> {
        self.exchange.try_send_body(chunk.into()).ok()
    }

    /// The request body is complete.
    pub fn end_body(&self) {
        self.exchange.end_body();
    }

    /// The client went away before the request body was complete (the engine answers 400).
    pub fn abort_body(&self) {
        self.exchange.abort_body();
    }

    /// The whole response when `answer` completed it at once; `null`/`nil` otherwise (then
    /// `response`).
    pub fn complete_response(&self) -> Option<HttpResponseHead> {
        self.exchange
            .complete_response()
            .map(HttpResponseHead::from)
    }

    /// The response's status and header fields (and its whole body when complete), once
    /// ready; `null`/`nil` when the client hung up first. Taken once (a second call is
    /// `InvalidArgument`).
    pub async fn response(&self) -> Result<Option<HttpResponseHead>, ToolwireError> {
        let head = self.exchange.response().await?;
        Ok(head.map(HttpResponseHead::from))
    }

    /// The next chunk of the response body; `null`/`nil` at its end, or once the client hung
    /// up. An SSE body goes on while its exchange does.
    pub async fn next_chunk(&self) -> Option<Vec<u8>> {
        self.exchange.next_chunk().await.map(|chunk| chunk.to_vec())
    }

    /// The client hung up (or the app stops answering): the response, or the wait for it, is
    /// dropped, which cancels a 2026-07-28 request; an earlier era's call goes on and its
    /// stream can be resumed. (Kotlin's `close()`, the generated `AutoCloseable`'s, only frees
    /// the object; it hangs up too once no call is waiting on it.)
    pub fn hang_up(&self) {
        self.exchange.hang_up();
    }
}
