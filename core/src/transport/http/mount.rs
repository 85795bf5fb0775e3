//! Streamable HTTP inside a web server of the host's own (axum, an ASGI app, Express, Ktor):
//! the endpoint [`Server::serve_http`] runs, without its listener. The host's server reads the
//! request head, routes it here, and sends back the response head and its streamed body.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Frame, SizeHint};
use hyper::{Request, Response};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::body::Body;
use super::endpoint::{Connection, Endpoint};
use crate::{Error, Server};

/// See [`HttpEndpoint::whole_body_bytes`].
const WHOLE_BODY_BYTES: usize = 64 * 1024;
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
    /// Where exchanges run their requests and read their bodies (the SSE body has timers).
    runtime: tokio::runtime::Handle,
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
            runtime,
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
        // A few chunks in flight: the host waits for room (backpressure), nothing piles up.
        let (tx, rx) = mpsc::channel(4);
        let request = request_head(method, target, headers)?
            .body(ChannelBody { rx })
            .map_err(|err| Error::InvalidArgument(format!("bad HTTP request: {err}")))?;
        Ok((request, RequestBodySender { tx }))
    }

    /// Answers one request whose body the host holds whole (a POST read to its end, or a GET
    /// or DELETE without one): the way for a host without Rust futures of its own (a binding)
    /// when the body is there already. The answer starts on the caller's thread: when it needs
    /// no handler of the host's (the handshake, a notification, a DELETE, a refusal) and the
    /// server's stores are in this process, it is complete when this returns
    /// ([`HttpExchange::complete_response`]), with no hop to the endpoint's runtime; otherwise
    /// it goes on there as [`exchange`](Self::exchange)'s does. Errors as
    /// [`request`](Self::request)'s.
    pub fn answer<'a>(
        &self,
        method: &str,
        target: &str,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        body: Bytes,
        peer: Option<IpAddr>,
    ) -> Result<HttpExchange, Error> {
        let request = request_head(method, target, headers)?
            .body(Full::new(body))
            .map_err(|err| Error::InvalidArgument(format!("bad HTTP request: {err}")))?;
        let peer = peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let connection = Connection::new(self.endpoint.clone(), peer);
        let mut answering: Pin<Box<dyn Future<Output = HttpResponse> + Send>> =
            Box::pin(async move { connection.handle(request).await.map(HttpBody) });
        // A store that may block (Redis) must not block the host's thread: those go on the
        // runtime from the start.
        if self.endpoint.answers_in_process() {
            // Timers and spawns made while polling belong to the endpoint's runtime; the waker
            // is nobody's: a pending answer is polled again once spawned below.
            let _entered = self.runtime.enter();
            let mut context = Context::from_waker(Waker::noop());
            match std::panic::catch_unwind(AssertUnwindSafe(|| {
                answering.as_mut().poll(&mut context)
            })) {
                Ok(Poll::Ready(response)) => {
                    return Ok(HttpExchange::answered(response, self.runtime.clone()));
                }
                Ok(Poll::Pending) => {}
                // A bug of ours, never the host's thread's end: the client gets a 500.
                Err(_) => {
                    return Ok(HttpExchange::answered(
                        failed_response(),
                        self.runtime.clone(),
                    ));
                }
            }
        }
        let running = self.runtime.spawn(answering);
        Ok(HttpExchange::running(running, None, self.runtime.clone()))
    }

    /// Bodies up to this many bytes a host may read whole before [`answer`](Self::answer), when
    /// the request says its length: a small body follows its head at once nearly always, and a
    /// whole body is answered in one step. Larger ones (and chunked ones) go through
    /// [`exchange`](Self::exchange) as they come, so a host never buffers much of one.
    pub fn whole_body_bytes(&self) -> usize {
        WHOLE_BODY_BYTES
    }

    /// How long a client may take to send a request's body before the endpoint answers 408
    /// (`None`: no limit), for a host that reads a body whole before [`answer`](Self::answer).
    pub fn body_read_timeout(&self) -> Option<Duration> {
        self.endpoint.body_read_timeout()
    }

    /// Starts answering one request for a host without Rust futures of its own (a binding):
    /// the request is handled on the endpoint's runtime while the host feeds its body and then
    /// reads the response through the returned [`HttpExchange`], whose methods may be awaited
    /// from any executor. Errors as [`request`](Self::request)'s.
    pub fn exchange<'a>(
        &self,
        method: &str,
        target: &str,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        peer: Option<IpAddr>,
    ) -> Result<HttpExchange, Error> {
        self.exchange_after(method, target, headers, peer, Duration::ZERO)
    }

    /// [`exchange`](Self::exchange) for a request whose body the host waited `waited` for
    /// already (it tried to read it whole first): the body timeout counts that wait, so a
    /// stalled body is answered 408 when the timeout is up, not that much later.
    pub fn exchange_after<'a>(
        &self,
        method: &str,
        target: &str,
        headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        peer: Option<IpAddr>,
        waited: Duration,
    ) -> Result<HttpExchange, Error> {
        let (mut request, sender) = HttpEndpoint::request(method, target, headers)?;
        if !waited.is_zero() {
            request
                .extensions_mut()
                .insert(super::post::BodyWaited(waited));
        }
        let peer = peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let connection = Connection::new(self.endpoint.clone(), peer);
        let answering = self
            .runtime
            .spawn(async move { connection.handle(request).await.map(HttpBody) });
        Ok(HttpExchange::running(
            answering,
            Some(sender),
            self.runtime.clone(),
        ))
    }

    /// Ends every session (their calls in flight finish first, each within the server's
    /// `drain_timeout`) and stops reaping. Requests handled afterwards find no session.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.reaper.abort();
        self.endpoint.end_all_sessions().await;
    }
}

/// A request's head from what a host gives; a bad method, target or header field is
/// [`Error::InvalidArgument`] naming it.
fn request_head<'a>(
    method: &str,
    target: &str,
    headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
) -> Result<hyper::http::request::Builder, Error> {
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
    Ok(builder)
}

/// The answer to a request whose handling panicked (a bug of ours).
fn failed_response() -> HttpResponse {
    let mut response = Response::new(HttpBody(Body::full(
        "toolwire: the endpoint failed to answer this request",
    )));
    *response.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
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

/// One request of a mounted endpoint, driven step by step by a host (see
/// [`HttpEndpoint::exchange`] and [`HttpEndpoint::answer`]): the body in
/// ([`send_body`](Self::send_body), then [`end_body`](Self::end_body) or
/// [`abort_body`](Self::abort_body); not for `answer`, which has it whole), the response out
/// ([`complete_response`](Self::complete_response) or [`response`](Self::response), then, for a
/// streamed body, [`next_chunk`](Self::next_chunk) until `None`), and
/// [`hang_up`](Self::hang_up) when the client went away. Dropping it hangs up too.
pub struct HttpExchange {
    sender: std::sync::Mutex<Option<RequestBodySender>>,
    answering: std::sync::Mutex<Option<Answering>>,
    /// Drops the answering task (the hang-up before the response head); none once answered.
    stop_answering: Option<tokio::task::AbortHandle>,
    body: Arc<tokio::sync::Mutex<Option<HttpBody>>>,
    /// The client went away: chunks still awaited come back as the end.
    hung_up: CancellationToken,
    runtime: tokio::runtime::Handle,
}

/// Where an exchange's response is.
enum Answering {
    /// Being answered on the endpoint's runtime.
    Running(JoinHandle<HttpResponse>),
    /// Answered on the host's thread ([`HttpEndpoint::answer`]).
    Ready(HttpResponse),
}

/// A response's status and header fields (values as sent: bytes), and its body when it is
/// complete already (a JSON answer, a refusal; `content-length` is then among the fields):
/// `None` for a streamed one (SSE), read with [`HttpExchange::next_chunk`].
#[derive(Clone, Debug)]
pub struct ResponseHead {
    /// The HTTP status.
    pub status: u16,
    /// Header names (lower case) and values, in order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The whole body, when complete; `None`: it streams.
    pub body: Option<Bytes>,
}

impl ResponseHead {
    /// The head of `response`, with its body when complete; otherwise the body to stream.
    fn of(response: HttpResponse) -> (ResponseHead, Option<HttpBody>) {
        let (head, HttpBody(body)) = response.into_parts();
        let mut headers: Vec<(String, Vec<u8>)> = head
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
            .collect();
        let status = head.status;
        match body {
            Body::Full(bytes) => {
                let bytes = bytes.unwrap_or_default();
                // What hyper adds when it serves: the host's server then sends the body as it
                // is, not in chunks.
                // 1xx, 204 No Content and 304 Not Modified carry no body (RFC 9110).
                let bodiless = status.is_informational() || matches!(status.as_u16(), 204 | 304);
                if !bodiless && !head.headers.contains_key(hyper::header::CONTENT_LENGTH) {
                    headers.push((
                        "content-length".into(),
                        bytes.len().to_string().into_bytes(),
                    ));
                }
                let head = ResponseHead {
                    status: status.as_u16(),
                    headers,
                    body: Some(bytes),
                };
                (head, None)
            }
            streamed => {
                let head = ResponseHead {
                    status: status.as_u16(),
                    headers,
                    body: None,
                };
                (head, Some(HttpBody(streamed)))
            }
        }
    }
}

impl HttpExchange {
    fn running(
        answering: JoinHandle<HttpResponse>,
        sender: Option<RequestBodySender>,
        runtime: tokio::runtime::Handle,
    ) -> HttpExchange {
        HttpExchange {
            sender: std::sync::Mutex::new(sender),
            stop_answering: Some(answering.abort_handle()),
            answering: std::sync::Mutex::new(Some(Answering::Running(answering))),
            body: Arc::new(tokio::sync::Mutex::new(None)),
            hung_up: CancellationToken::new(),
            runtime,
        }
    }

    fn answered(response: HttpResponse, runtime: tokio::runtime::Handle) -> HttpExchange {
        HttpExchange {
            sender: std::sync::Mutex::new(None),
            stop_answering: None,
            answering: std::sync::Mutex::new(Some(Answering::Ready(response))),
            body: Arc::new(tokio::sync::Mutex::new(None)),
            hung_up: CancellationToken::new(),
            runtime,
        }
    }

    /// Hands over one body chunk, waiting while the endpoint has not taken the ones before;
    /// false when it reads no more of the body (it answered already, e.g. 413), or after
    /// `end_body`/`abort_body`.
    pub async fn send_body(&self, chunk: Bytes) -> bool {
        let sender = lock(&self.sender).clone();
        match sender {
            Some(sender) => sender.send(chunk).await,
            None => false,
        }
    }

    /// [`send_body`](Self::send_body) without the wait: `Ok` as its answer when the endpoint
    /// had room for the chunk now, `Err(chunk)` when it had none (then `send_body` it).
    pub fn try_send_body(&self, chunk: Bytes) -> Result<bool, Bytes> {
        let sender = lock(&self.sender);
        let Some(sender) = sender.as_ref() else {
            return Ok(false);
        };
        match sender.tx.try_send(Ok(chunk)) {
            Ok(()) => Ok(true),
            Err(mpsc::error::TrySendError::Full(Ok(chunk))) => Err(chunk),
            Err(mpsc::error::TrySendError::Full(Err(_))) => Ok(false),
            Err(mpsc::error::TrySendError::Closed(_)) => Ok(false),
        }
    }

    /// The body is complete.
    pub fn end_body(&self) {
        lock(&self.sender).take();
    }

    /// The client went away before the body was complete (the endpoint answers 400).
    pub fn abort_body(&self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
    }

    /// The whole response, head and complete body, when [`HttpEndpoint::answer`] finished it
    /// on the caller's thread: no wait, no hop. `None` otherwise (not answered yet, or a
    /// streamed body): then [`response`](Self::response). Taken once.
    pub fn complete_response(&self) -> Option<ResponseHead> {
        let mut answering = lock(&self.answering);
        match answering.as_ref() {
            Some(Answering::Ready(response))
                if matches!(response.body().0, Body::Full(_)) && !self.hung_up.is_cancelled() =>
            {
                let Some(Answering::Ready(response)) = answering.take() else {
                    return None;
                };
                Some(ResponseHead::of(response).0)
            }
            _ => None,
        }
    }

    /// The response head when it is ready now, with no wait and no hop: the whole response as
    /// [`complete_response`](Self::complete_response) gives it, or the head of a streamed body
    /// (an SSE stream [`HttpEndpoint::answer`] opened on the host's thread), whose chunks then
    /// come from [`ready_chunks`](Self::ready_chunks) and [`next_chunk`](Self::next_chunk).
    /// `None` when it is not ready yet or the client hung up: then
    /// [`response`](Self::response). Taken once.
    pub fn ready_response(&self) -> Option<ResponseHead> {
        if self.hung_up.is_cancelled() {
            return None;
        }
        let mut answering = lock(&self.answering);
        if !matches!(answering.as_ref(), Some(Answering::Ready(_))) {
            return None;
        }
        // Free unless a read is under way, which no taker of the head starts before it.
        let Ok(mut slot) = self.body.try_lock() else {
            return None;
        };
        let Some(Answering::Ready(response)) = answering.take() else {
            return None;
        };
        let (head, streamed) = ResponseHead::of(response);
        *slot = streamed;
        Some(head)
    }

    /// The chunks of a streamed body that are ready now, joined (up to about `max_bytes`: the
    /// last chunk taken may pass it), with no wait; and whether the body ended (or the client
    /// hung up, or there is no streamed body). Nothing and not ended: wait with
    /// [`next_chunk`](Self::next_chunk). Call it once the head was taken: before, there is no
    /// streamed body yet, which reads as ended. A host that sends what is ready with the head saves
    /// a wait per chunk: an SSE answer to a call is often whole by the time its head is sent.
    pub fn ready_chunks(&self, max_bytes: usize) -> (Bytes, bool) {
        if self.hung_up.is_cancelled() {
            return (Bytes::new(), true);
        }
        // Held by a read under way: nothing is ready here.
        let Ok(mut slot) = self.body.try_lock() else {
            return (Bytes::new(), false);
        };
        let Some(body) = slot.as_mut() else {
            return (Bytes::new(), true);
        };
        // Timers polled here belong to the endpoint's runtime; the waker is nobody's: what is
        // not ready is polled again by `next_chunk`, with its own.
        let _entered = self.runtime.enter();
        let mut context = Context::from_waker(Waker::noop());
        let mut chunks: Vec<Bytes> = Vec::new();
        let mut size = 0;
        let mut ended = false;
        // Polled once at least: `max_bytes` 0 still tells the end.
        loop {
            let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
                hyper::body::Body::poll_frame(Pin::new(&mut *body), &mut context)
            }));
            match polled {
                Ok(Poll::Ready(Some(Ok(frame)))) => {
                    if let Ok(data) = frame.into_data() {
                        size += data.len();
                        chunks.push(data);
                    }
                    if size >= max_bytes {
                        break;
                    }
                }
                Ok(Poll::Ready(Some(Err(never)))) => match never {},
                Ok(Poll::Pending) => break,
                // The end, or a bug of ours while reading (the response ends where it broke,
                // as `next_chunk`'s read would end it).
                Ok(Poll::Ready(None)) | Err(_) => {
                    ended = true;
                    break;
                }
            }
        }
        if ended {
            // Never polled again after its end.
            slot.take();
        }
        let joined = match chunks.len() {
            0 => Bytes::new(),
            1 => chunks.swap_remove(0),
            _ => Bytes::from(chunks.concat()),
        };
        (joined, ended)
    }

    /// The response head once it is ready, with the whole body when it is complete; `None`
    /// when the client hung up first. Taken once: a second call (or one after
    /// [`complete_response`](Self::complete_response) gave it) is [`Error::InvalidArgument`].
    pub async fn response(&self) -> Result<Option<ResponseHead>, Error> {
        if self.hung_up.is_cancelled() {
            return Ok(None);
        }
        let answering = lock(&self.answering).take();
        let response = match answering {
            None => {
                return Err(Error::InvalidArgument(
                    "the response was taken already".into(),
                ));
            }
            Some(Answering::Ready(response)) => response,
            Some(Answering::Running(running)) => match running.await {
                Ok(response) => response,
                // The client hung up first: nobody waits for the head.
                Err(err) if err.is_cancelled() => return Ok(None),
                Err(err) => {
                    return Err(Error::Transport(std::io::Error::other(format!(
                        "the endpoint failed: {err}"
                    ))));
                }
            },
        };
        if self.hung_up.is_cancelled() {
            return Ok(None);
        }
        let (head, streamed) = ResponseHead::of(response);
        if let Some(body) = streamed {
            let mut slot = self.body.lock().await;
            if self.hung_up.is_cancelled() {
                // The client went away meanwhile: the body (and a 2026-07-28 request with it)
                // goes now, not when this exchange is freed.
                return Ok(None);
            }
            *slot = Some(body);
        }
        Ok(Some(head))
    }

    /// The next chunk of a streamed response body; `None` at its end, once the client hung
    /// up, or at once when the body came whole with the head.
    pub async fn next_chunk(&self) -> Option<Bytes> {
        let body = self.body.clone();
        let hung_up = self.hung_up.clone();
        // On the endpoint's runtime: an SSE body's keep-alive needs its timers.
        self.runtime
            .spawn(async move {
                tokio::select! {
                    biased;
                    () = hung_up.cancelled() => None,
                    chunk = async {
                        let mut slot = body.lock().await;
                        let chunk = match slot.as_mut() {
                            Some(body) => body.next_chunk().await,
                            None => None,
                        };
                        if chunk.is_none() {
                            // Never polled again after its end (`ready_chunks` included).
                            slot.take();
                        }
                        chunk
                    } => chunk,
                }
            })
            .await
            .ok()
            .flatten()
    }

    /// The client hung up: the response (or the wait for it) is dropped, which cancels a
    /// 2026-07-28 request; an earlier era's call goes on and its stream can be resumed.
    pub fn hang_up(&self) {
        // What is dropped here (an SSE body's timer) may belong to the runtime.
        let _entered = self.runtime.enter();
        self.hung_up.cancel();
        lock(&self.sender).take();
        if let Some(stop) = &self.stop_answering {
            stop.abort();
        }
        // An answer finished on the host's thread and not taken: dropped here.
        let mut answering = lock(&self.answering);
        if matches!(answering.as_ref(), Some(Answering::Ready(_))) {
            answering.take();
        }
        drop(answering);
        // The streamed body goes now; when a chunk is being read, once that read ends.
        if let Ok(mut body) = self.body.try_lock() {
            body.take();
        } else {
            let body = self.body.clone();
            self.runtime.spawn(async move {
                body.lock().await.take();
            });
        }
    }
}

impl Drop for HttpExchange {
    fn drop(&mut self) {
        // The answer nobody will read: its request ends as if the client hung up.
        self.hung_up.cancel();
        if let Some(stop) = &self.stop_answering {
            stop.abort();
        }
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
