//! Streamable HTTP inside a web server of the host's own (axum, an ASGI app, Express, Ktor):
//! the endpoint [`Server::serve_http`] runs, without its listener. The host's server reads the
//! request head, routes it here, and sends back the response head and its streamed body.

use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, SizeHint};
use hyper::{Request, Response};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::body::Body;
use super::endpoint::{Connection, Endpoint};
use crate::{Error, Server};

/// Streamable HTTP for a web server of your own: `handle` each request the app routes to it
/// (POST, GET and DELETE on the MCP path), and send back the response it returns, streaming
/// its body. Everything [`Server::serve_http`] does is done here too (sessions, SSE and
/// resumption, the 2026-07-28 exchanges, the Host/Origin guard, bearer tokens, limits); what
/// the listener did (connection limits, head timeouts) is the host server's.
///
/// The Host guard has no bound address to go by: unless [`HttpOptions::allowed_hosts`] names
/// the app's host names, only loopback names pass (`localhost`, `127.0.0.1`, `[::1]`), so a
/// mounted endpoint is never open to DNS rebinding by default; likewise browsers' `Origin`
/// (set [`HttpOptions::allowed_origins`] for the app's own pages). [`HttpOptions::path`] is
/// not matched (the app routed the request here); it names the endpoint in the OAuth protected
/// resource metadata, whose path (`/.well-known/oauth-protected-resource` + the path) the app
/// must route here too when tokens are required. Without a peer address, every client counts
/// as one for `max_sessions_per_client`: pass the client's (behind a proxy, the forwarded one).
pub struct HttpEndpoint {
    endpoint: Arc<Endpoint>,
    stop: CancellationToken,
    reaper: JoinHandle<()>,
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint").finish_non_exhaustive()
    }
}

impl Server {
    /// Streamable HTTP as a handler for a web server of your own (see [`HttpEndpoint`]).
    /// Must be called within a tokio runtime (idle sessions are reaped on it).
    pub fn http_endpoint(&self, options: HttpOptions) -> Result<HttpEndpoint, Error> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|e| Error::NoRuntime(e.to_string()))?;
        let stop = CancellationToken::new();
        let endpoint = Endpoint::mounted(self.clone(), options, stop.clone());
        let reaper = runtime.spawn(endpoint.clone().reap_idle_sessions());
        Ok(HttpEndpoint {
            endpoint,
            stop,
            reaper,
        })
    }
}

impl HttpEndpoint {
    /// Answers one request. `peer` is the client's address (it bounds the sessions one client
    /// may hold when no token names a subject; unknown: all such clients count as one).
    /// Dropping the response (or its body) is the client hanging up: a 2026-07-28 request is
    /// then cancelled; an earlier era's call goes on, and the client may resume its stream.
    pub async fn handle<B>(&self, request: Request<B>, peer: Option<IpAddr>) -> Response<HttpBody>
    where
        B: hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
            + Send,
    {
        let peer = peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let connection = Connection::new(self.endpoint.clone(), peer);
        connection.handle(request).await.map(HttpBody)
    }

    /// Builds the request [`handle`](Self::handle) takes from what a host's server gives:
    /// the method, the request target (path and query), the header fields, and a body the
    /// host feeds chunk by chunk (see [`RequestBodySender`]) *while* `handle` runs: a few
    /// chunks wait at most, so feeding the whole body before calling `handle` would wait for
    /// ever. Header names and values are checked here; a bad one is [`Error::InvalidArgument`]
    /// naming it.
    pub fn request<'a>(
        method: &str,
        target: &str,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<(Request<ChannelBody>, RequestBodySender), Error> {
        let mut builder = Request::builder().method(
            hyper::Method::from_bytes(method.as_bytes())
                .map_err(|_| Error::InvalidArgument(format!("bad HTTP method {method:?}")))?,
        );
        builder = builder.uri(target);
        let header_map = builder
            .headers_mut()
            .ok_or_else(|| Error::InvalidArgument(format!("bad HTTP request target {target:?}")))?;
        for (name, value) in headers {
            let name = hyper::header::HeaderName::from_bytes(name).map_err(|_| {
                Error::InvalidArgument(format!(
                    "bad HTTP header name {:?}",
                    String::from_utf8_lossy(name)
                ))
            })?;
            let value = hyper::header::HeaderValue::from_bytes(value)
                .map_err(|_| Error::InvalidArgument(format!("bad value of HTTP header {name}")))?;
            header_map.append(name, value);
        }
        // A few chunks in flight: the host waits for room (backpressure), nothing piles up.
        let (tx, rx) = mpsc::channel(4);
        let request = builder
            .body(ChannelBody { rx })
            .map_err(|err| Error::InvalidArgument(format!("bad HTTP request: {err}")))?;
        Ok((request, RequestBodySender { tx }))
    }

    /// Ends every session (their calls in flight finish first, each within the server's
    /// `drain_timeout`) and stops reaping. Requests handled afterwards find no session.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.reaper.abort();
        self.endpoint.end_all_sessions().await;
    }
}

impl Drop for HttpEndpoint {
    fn drop(&mut self) {
        self.stop.cancel();
        self.reaper.abort();
    }
}

/// What [`HttpEndpoint::handle`] answers.
pub type HttpResponse = Response<HttpBody>;

/// The response body of a mounted endpoint: a complete JSON body, or an SSE stream that goes
/// on while the exchange does. An `http_body::Body` (for hyper, axum and the like), or read
/// chunk by chunk with [`next_chunk`](Self::next_chunk).
pub struct HttpBody(Body);

impl HttpBody {
    /// The next chunk to send; `None` when the body is complete.
    pub async fn next_chunk(&mut self) -> Option<Bytes> {
        loop {
            match self.frame().await? {
                Ok(frame) => match frame.into_data() {
                    Ok(data) => return Some(data),
                    Err(_trailers) => continue,
                },
                Err(never) => match never {},
            }
        }
    }
}

impl hyper::body::Body for HttpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

/// The request body a host feeds: [`send`](Self::send) each chunk as it arrives, then drop the
/// sender and its clones (the body ends), or [`abort`](Self::abort) if the client went away
/// mid-body.
#[derive(Clone)]
pub struct RequestBodySender {
    tx: mpsc::Sender<Result<Bytes, BodyAborted>>,
}

impl RequestBodySender {
    /// Hands over one chunk, waiting while the endpoint has not taken the ones before; false
    /// when the endpoint no longer reads the body (it answered already, e.g. 413).
    pub async fn send(&self, chunk: Bytes) -> bool {
        self.tx.send(Ok(chunk)).await.is_ok()
    }

    /// The body will not be complete: the endpoint answers 400 instead of reading on. Never
    /// waits: with no room for the word, the body just ends there (and is refused as the
    /// incomplete JSON it is).
    pub fn abort(self) {
        let _ = self.tx.try_send(Err(BodyAborted));
    }
}

/// The client went away before its request body was complete.
#[derive(Debug)]
pub struct BodyAborted;

impl std::fmt::Display for BodyAborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the client went away before the request body was complete")
    }
}

impl std::error::Error for BodyAborted {}

/// A request body fed by a [`RequestBodySender`].
pub struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, BodyAborted>>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = BodyAborted;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.get_mut()
            .rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|chunk| chunk.map(Frame::data)))
    }
}
