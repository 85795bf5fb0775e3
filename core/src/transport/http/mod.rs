//! Streamable HTTP (MCP 2025-03-26 … 2025-11-25) on one endpoint path.
//!
//! - `POST`: one client message (or a batch). Notifications and responses get `202`; requests
//!   get their answers as JSON or as an SSE stream that also carries the progress, logs and
//!   server→client requests of those requests, then ends.
//! - `GET`: the session's standalone SSE stream (messages tied to no request), or, with
//!   `Last-Event-ID`, the resumption of any stream of the session after that event.
//! - `DELETE`: ends the session.
//!
//! Safe by default: binds where it is told (examples use 127.0.0.1), checks `Host` and `Origin`
//! against allow-lists (loopback names for a loopback bind), limits bodies and live sessions,
//! and can require a bearer token checked by a validator of yours.

mod auth;
mod body;
mod endpoint;
mod events;
mod forward;
mod guard;
mod headers;
mod in_place;
mod modern;
mod mount;
mod post;
mod replies;
mod sessions;
mod sse;
mod stops;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use auth::{AuthRejection, BearerAuth, TokenInfo, TokenValidator};
pub use events::{EventStore, MemoryEventStore};
pub use mount::{
    BodyAborted, ChannelBody, HttpBody, HttpEndpoint, HttpExchange, HttpResponse,
    RequestBodySender, ResponseHead,
};

use crate::{Error, Server};

/// How answers to POSTed requests are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseMode {
    /// JSON when the answer is ready as the request is handled (nothing else to send first);
    /// otherwise an SSE stream, so progress, logs and requests to the client flow while the
    /// call runs, and the client can resume it after a dropped connection.
    #[default]
    Auto,
    /// Always one JSON body. Messages tied to the call (progress, logs, requests to the client)
    /// go on the session's standalone GET stream instead.
    Json,
    /// Always an SSE stream.
    Sse,
}

impl ResponseMode {
    /// The mode's name as hosts write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Auto => "auto",
            ResponseMode::Json => "json",
            ResponseMode::Sse => "sse",
        }
    }

    /// Reads `"auto"`, `"json"` or `"sse"` (how hosts name the modes).
    pub fn parse(text: &str) -> Result<ResponseMode, Error> {
        match text {
            "auto" => Ok(ResponseMode::Auto),
            "json" => Ok(ResponseMode::Json),
            "sse" => Ok(ResponseMode::Sse),
            other => Err(Error::InvalidArgument(format!(
                "response mode {other:?}: one of \"auto\", \"json\", \"sse\""
            ))),
        }
    }
}

/// Settings of the Streamable HTTP transport.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The MCP endpoint path (default `/mcp`).
    pub path: String,
    /// `Host` header values accepted (`name` or `name:port`, case-insensitive). Empty (the
    /// default): loopback names when bound to a loopback address, any host otherwise.
    pub allowed_hosts: Vec<String>,
    /// `Origin` header values accepted (e.g. `https://app.example.com`). Empty (the default):
    /// loopback origins (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`) when bound
    /// to a loopback address, none otherwise. A request without `Origin` (not from a browser)
    /// passes.
    pub allowed_origins: Vec<String>,
    /// No sessions: every POST stands alone (no session id, no GET stream, requests to the
    /// client fail at once with [`Error::NoBackChannel`]). Scales behind any load balancer.
    pub stateless: bool,
    /// JSON or SSE answers (default [`ResponseMode::Auto`]).
    pub response_mode: ResponseMode,
    /// Live sessions at most (default 10,000). A new one beyond that ends an idle session to
    /// make room: the least recently used of the client holding the most sessions, if that
    /// client holds at least two more than the newcomer's (so no client ends up with fewer than
    /// the newcomer), else the newcomer's own client's; with none, the new one gets `503`.
    pub max_sessions: usize,
    /// Live sessions one client may hold (default 1,000). The client is the token's subject
    /// when tokens are required, else the peer's IP address: behind a reverse proxy every
    /// client is the proxy's address, so raise this there or require tokens. A client at its
    /// limit that opens another loses its own least recently used idle session; with none
    /// idle, the new one gets `429`.
    pub max_sessions_per_client: usize,
    /// A session with no request, no call in flight and no open stream for this long is ended
    /// (default 1 hour; `None`: never).
    pub session_idle_timeout: Option<Duration>,
    /// Largest request body in bytes (default: the server's `max_frame_bytes`).
    pub max_body_bytes: Option<usize>,
    /// How long a client may take to send a request's head, counted from the connection's
    /// start or from the end of the previous answer on it (default 30 s). So it is also how
    /// long a kept-alive connection may sit idle; a client trickling its head (slowloris) is
    /// cut off at it. `None`: no limit.
    pub header_read_timeout: Option<Duration>,
    /// How long a client may take to send a whole request body, counted from when the endpoint
    /// starts reading it, after the Host, Origin and token checks (default 30 s: at the default
    /// 4 MiB body limit, about 140 KB/s at the least); past it: `408` and the connection closed.
    /// `None`: no limit.
    pub body_read_timeout: Option<Duration>,
    /// Open connections at most (default 10,000); one beyond is answered `503` and closed.
    /// On unix, never more than the open-file limit (`ulimit -n`) less 64, so the refusal can
    /// still be sent: past that limit a client would wait unanswered. (Each server of a process
    /// is bounded so on its own; they share the one limit.)
    pub max_connections: usize,
    /// The `retry:` hint sent before the server closes an SSE connection it wants the client to
    /// reopen (default 1 s).
    pub sse_retry: Duration,
    /// Bytes that may wait in memory for one SSE connection whose reader is slow (default
    /// 1 MiB; at most one more event waits beyond it, so a big result still goes out). A
    /// reader further behind is let go with a `retry:` hint; the stream goes on, and the client
    /// resumes it with `Last-Event-ID` (a stream that cannot be resumed just ends).
    pub max_sse_buffered_bytes: usize,
    /// A comment line on idle SSE connections this often, so proxies keep them (default 15 s).
    pub sse_keep_alive: Option<Duration>,
    /// Where SSE events are kept for replay after `Last-Event-ID` (default: in memory, bounded).
    pub event_store: Arc<dyn EventStore>,
    /// Require a bearer token on every request (default: none).
    pub auth: Option<BearerAuth>,
    /// Serve the server's metrics to `GET` on this path, in the Prometheus text format
    /// ([`Server::metrics_text`]), e.g. `/metrics` (default: none). The Host and Origin guard
    /// applies; a bearer token is not asked for (scrapers rarely carry one): serve it where
    /// only your scraper reaches, or leave it off and serve `metrics_text` yourself. Not
    /// served by a mounted endpoint (the app serves its own routes).
    pub metrics_path: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            stateless: false,
            response_mode: ResponseMode::Auto,
            max_sessions: 10_000,
            max_sessions_per_client: 1_000,
            session_idle_timeout: Some(Duration::from_secs(3600)),
            max_body_bytes: None,
            header_read_timeout: Some(Duration::from_secs(30)),
            body_read_timeout: Some(Duration::from_secs(30)),
            max_connections: 10_000,
            sse_retry: Duration::from_secs(1),
            max_sse_buffered_bytes: 1024 * 1024,
            sse_keep_alive: Some(Duration::from_secs(15)),
            event_store: Arc::new(MemoryEventStore::default()),
            auth: None,
            metrics_path: None,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("stateless", &self.stateless)
            .field("response_mode", &self.response_mode)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_client", &self.max_sessions_per_client)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_sse_buffered_bytes", &self.max_sse_buffered_bytes)
            .field("auth", &self.auth.is_some())
            .field("metrics_path", &self.metrics_path)
            .finish_non_exhaustive()
    }
}

/// A running Streamable HTTP server (see [`Server::serve_http`]).
pub struct HttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// The address it listens on (the port, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A token that stops the server when cancelled (as [`shutdown`](Self::shutdown) does).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Stops accepting, lets calls in flight finish (each session's `drain_timeout`), ends
    /// every session and closes the connections.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }

    /// Waits until the server stops (its stop token is cancelled).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

impl Server {
    /// Serves Streamable HTTP on `addr` (e.g. `"127.0.0.1:8080"`; port 0 picks one) at
    /// `options.path`, until the returned handle is shut down (or [`Server::stop`]). Binds before returning, so a
    /// bad address or a port in use is reported here.
    pub fn serve_http(
        &self,
        addr: &str,
        options: HttpOptions,
    ) -> impl Future<Output = Result<HttpServer, Error>> + use<'_> {
        // Taken now, not after the bind: a `stop()` meanwhile ends this server too.
        let stop = self.stop_token();
        let addr = addr.to_owned();
        async move {
            // Bad options are refused before anything starts; then the lifespan, whose failure
            // to start is this call's error.
            check_paths(&options)?;
            let hold = self.hold_lifespan().await?;
            let listener = match TcpListener::bind(&addr).await {
                Ok(listener) => listener,
                Err(err) => {
                    hold.release().await;
                    return Err(Error::Transport(err));
                }
            };
            self.serve_http_stopping(listener, options, stop, Some(hold))
        }
    }

    /// [`serve_http`](Self::serve_http) on a listener you bound. The server's lifespan is held
    /// from its start, in the server's task: connections wait meanwhile, and a failed start
    /// ends the server (logged).
    pub fn serve_http_on(
        &self,
        listener: TcpListener,
        options: HttpOptions,
    ) -> Result<HttpServer, Error> {
        self.serve_http_stopping(listener, options, self.stop_token(), None)
    }

    /// Ended by its own shutdown, or with everything else when `stop` (a [`Server::stop`]
    /// token) is cancelled.
    fn serve_http_stopping(
        &self,
        listener: TcpListener,
        options: HttpOptions,
        stop: CancellationToken,
        hold: Option<crate::LifespanHold>,
    ) -> Result<HttpServer, Error> {
        check_paths(&options)?;
        let local_addr = listener.local_addr().map_err(Error::Transport)?;
        let limits = ConnectionLimits {
            header_read_timeout: options.header_read_timeout,
            max_connections: connections_allowed(options.max_connections, open_file_limit()),
        };
        let endpoint = endpoint::Endpoint::new(self.clone(), options, local_addr, stop.clone());
        let server = self.clone();
        let accepting = stop.clone();
        let task = tokio::spawn(async move {
            let hold = match hold {
                Some(hold) => hold,
                None => match server.hold_lifespan().await {
                    Ok(hold) => hold,
                    Err(err) => return tracing::error!(%err, "the HTTP server did not start"),
                },
            };
            accept_loop(listener, endpoint, limits, accepting).await;
            // After every session has ended: the last serve's release waits for the clean-up.
            hold.release().await;
        });
        tracing::info!(%local_addr, "serving Streamable HTTP");
        Ok(HttpServer {
            local_addr,
            stop,
            task,
        })
    }
}

/// The MCP and metrics paths an HTTP server can serve.
fn check_paths(options: &HttpOptions) -> Result<(), Error> {
    if !options.path.starts_with('/') {
        return Err(Error::InvalidArgument(format!(
            "the HTTP path must start with '/': {:?}",
            options.path
        )));
    }
    if let Some(metrics) = &options.metrics_path
        && (!metrics.starts_with('/') || *metrics == options.path)
    {
        return Err(Error::InvalidArgument(format!(
            "the metrics path must start with '/' and differ from the MCP path: {metrics:?}"
        )));
    }
    Ok(())
}

/// Descriptors kept back from the connections for everything else the process opens.
const DESCRIPTOR_HEADROOM: u64 = 64;

/// The process's open-file limit; `None` where there is none or it cannot be read.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// Elsewhere no limit is read (Windows has no per-process descriptor limit of this kind).
#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// `max_connections`, or fewer when the open-file limit would run out first: past that limit
/// `accept` fails and new clients wait unanswered in the kernel's queue, while under it they
/// get the clear 503.
fn connections_allowed(max_connections: usize, open_file_limit: Option<u64>) -> usize {
    let Some(limit) = open_file_limit else {
        return max_connections;
    };
    let room = usize::try_from(limit.saturating_sub(DESCRIPTOR_HEADROOM))
        .unwrap_or(usize::MAX)
        .max(1);
    if room < max_connections {
        tracing::info!(
            max_connections,
            open_file_limit = limit,
            allowed = room,
            "fewer connections than max_connections: the open-file limit (ulimit -n) is lower; \
             raise it to allow more"
        );
    }
    max_connections.min(room)
}

/// What bounds a connection, before any request on it is read.
struct ConnectionLimits {
    header_read_timeout: Option<Duration>,
    max_connections: usize,
}

/// One open connection, counted while it lives.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The answer to a connection beyond `max_connections`: written at once, then the connection
/// closes. What the peer sent is read and dropped until it closes too (closing with unread
/// input would reset the connection, and the peer could lose the answer); a peer that does not
/// read or close is not waited for more than a second.
async fn refuse_connection(mut socket: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // `"id": null`, as JSON-RPC wants for an error to a request it could not read.
    const BODY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Service Unavailable: too many open connections"}}"#;
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: {}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        replies::RETRY_AFTER_SECONDS,
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        if socket.write_all(reply.as_bytes()).await.is_err() || socket.shutdown().await.is_err() {
            return;
        }
        let mut discard = [0u8; 1024];
        while let Ok(1..) = socket.read(&mut discard).await {}
    })
    .await;
}

async fn accept_loop(
    listener: TcpListener,
    endpoint: Arc<endpoint::Endpoint>,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let connections = TaskTracker::new();
    let stops = stops::ConnectionStops::default();
    let reaper = tokio::spawn(endpoint.clone().reap_idle_sessions());
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (socket, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors and the like: back off instead of spinning.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if open.load(Ordering::Acquire) >= limits.max_connections {
            tracing::debug!(
                limit = limits.max_connections,
                "refused a connection past the limit"
            );
            endpoint
                .server()
                .inner
                .metrics
                .refused(crate::metrics::Limit::Connections);
            connections.spawn(refuse_connection(socket));
            continue;
        }
        open.fetch_add(1, Ordering::AcqRel);
        let counted = Open(open.clone());
        // Answers are small writes that must not wait for Nagle's timer.
        let _ = socket.set_nodelay(true);
        let endpoint = endpoint.clone();
        let stop = stops.add();
        let header_read_timeout = limits.header_read_timeout;
        connections.spawn(async move {
            let _counted = counted;
            let state = endpoint::Connection::new(endpoint, peer.ip());
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(state.handle(request).await) }
            });
            let mut builder = http1::Builder::new();
            builder
                .keep_alive(true)
                // Most answers are a few hundred bytes: copied behind the head and sent with
                // one write, they cost the kernel less than a two-piece writev.
                .writev(false)
                // The head's deadline, also running while a kept-alive connection idles.
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout);
            let connection = builder.serve_connection(TokioIo::new(socket), service);
            tokio::pin!(connection);
            tokio::select! {
                result = in_place::InPlace::new(connection.as_mut()) => {
                    if let Err(err) = result {
                        tracing::debug!(%err, "HTTP connection ended with an error");
                    }
                }
                () = stop.stopped() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    stops.stop_all();
    reaper.abort();
    endpoint.end_all_sessions().await;
    connections.close();
    connections.wait().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_stay_under_the_open_file_limit() {
        assert_eq!(connections_allowed(10_000, Some(1024)), 960);
        assert_eq!(connections_allowed(100, Some(1024)), 100);
        assert_eq!(connections_allowed(10_000, Some(10)), 1, "never none");
        // Unlimited, or no limit known (the portable path): as configured.
        assert_eq!(connections_allowed(10_000, None), 10_000);
    }

    #[cfg(unix)]
    #[test]
    fn the_open_file_limit_is_read_on_unix() {
        let limit = open_file_limit();
        // The process has this test's descriptors open, so a limit, if any, is above a few.
        assert!(limit.is_none_or(|l| l > 3), "{limit:?}");
    }
}
