//! A client of a server over Streamable HTTP, `http://` or `https://` (rustls; the `https`
//! feature, on by default). Each message is a POST; its answer comes as JSON or as an event stream
//! (questions the server asks about the request come on that stream too); a legacy session's
//! server-sent notifications come on a GET stream, opened after the handshake.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::wire::{INCOMING_QUEUED, Incoming, Remote};
use super::{Answerer, Client, ClientOptions};
use crate::error::Error;

/// The largest answer or event read (64 MiB): past it the stream is dropped, and the request
/// it answers fails.
const LARGEST_BODY: usize = 64 << 20;

/// Idle connections kept for the next POSTs.
const IDLE_KEPT: usize = 8;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";

impl Client {
    /// Connects to the Streamable HTTP server at `url` (`http://host:port/path` or
    /// `https://…`), the handshake done. An https server's certificate is checked against the
    /// system's trusted roots (`SSL_CERT_FILE` or `SSL_CERT_DIR` name others), or Mozilla's
    /// when the system has none. `headers` go with every request (an `Authorization`, say). Closing
    /// deletes a legacy session.
    pub async fn connect_http(
        url: &str,
        headers: &[(String, String)],
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        let endpoint = Endpoint::parse(url, headers)?;
        let (incoming, frames) = mpsc::channel(INCOMING_QUEUED);
        let remote = HttpRemote {
            shared: Arc::new(Shared {
                endpoint,
                session: Mutex::new(None),
                version: Mutex::new(None),
                idle: Mutex::new(Vec::new()),
                incoming: Mutex::new(Some(incoming)),
                stop: CancellationToken::new(),
                listening: std::sync::atomic::AtomicBool::new(false),
                in_flight: Mutex::new(std::collections::HashMap::new()),
                initialized: Arc::new(tokio::sync::RwLock::new(())),
            }),
        };
        Client::over_remote(Box::new(remote), frames, options, answerer).await
    }
}

/// Where the server is, and what every request carries.
struct Endpoint {
    url: String,
    uri: Uri,
    authority: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Set for `https://`.
    #[cfg(feature = "https")]
    tls: Option<super::tls::Tls>,
}

impl Endpoint {
    fn parse(url: &str, headers: &[(String, String)]) -> Result<Endpoint, Error> {
        let uri = Uri::from_str(url)
            .map_err(|err| Error::InvalidArgument(format!("{url:?} is not a URL: {err}")))?;
        let secure = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{url:?} is not an http:// or https:// URL"
                )));
            }
        };
        let Some(authority) = uri.authority().map(|a| a.to_string()) else {
            return Err(Error::InvalidArgument(format!("{url:?} names no host")));
        };
        #[cfg(feature = "https")]
        let tls = match secure {
            true => Some(super::tls::Tls::for_host(uri.host().unwrap_or_default())?),
            false => None,
        };
        #[cfg(not(feature = "https"))]
        if secure {
            return Err(Error::InvalidArgument(format!(
                "{url}: this build of toolwire has no https (its `https` feature is off)"
            )));
        }
        let headers = headers
            .iter()
            .map(|(name, value)| {
                let name = HeaderName::from_str(name).map_err(|_| {
                    Error::InvalidArgument(format!("{name:?} is not a header name"))
                })?;
                let value = HeaderValue::from_str(value).map_err(|_| {
                    Error::InvalidArgument(format!("the value of header {name} is not valid"))
                })?;
                Ok((name, value))
            })
            .collect::<Result<_, Error>>()?;
        Ok(Endpoint {
            url: url.to_owned(),
            uri,
            authority,
            headers,
            #[cfg(feature = "https")]
            tls,
        })
    }

    fn address(&self) -> String {
        let default_port = match self.uri.scheme_str() {
            Some("https") => 443,
            _ => 80,
        };
        let port = self.uri.port_u16().unwrap_or(default_port);
        format!("{}:{port}", self.uri.host().unwrap_or("localhost"))
    }
}

struct Shared {
    endpoint: Endpoint,
    /// The legacy session's id, from the `initialize` answer.
    session: Mutex<Option<HeaderValue>>,
    /// The version negotiated (legacy) or asked for (2026-07-28), sent as a header.
    version: Mutex<Option<HeaderValue>>,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
    /// Dropped on shutdown, so the client's reader ends once every stream has.
    incoming: Mutex<Option<mpsc::Sender<Incoming>>>,
    stop: CancellationToken,
    listening: std::sync::atomic::AtomicBool,
    /// Each request's POST in flight, and whether it is of 2026-07-28.
    in_flight: Mutex<std::collections::HashMap<u64, (CancellationToken, bool)>>,
    /// Held for writing while `notifications/initialized` is posted: every other POST waits
    /// for it, so the server hears the handshake end before anything else.
    initialized: Arc<tokio::sync::RwLock<()>>,
}

struct HttpRemote {
    shared: Arc<Shared>,
}

impl Remote for HttpRemote {
    fn send(&self, message: &Value, request: Option<u64>) -> bool {
        let Some(incoming) = lock(&self.shared.incoming).clone() else {
            return false;
        };
        if self.shared.cancels_by_closing(message) {
            return true;
        }
        let shared = self.shared.clone();
        let message = message.clone();
        let initialized =
            message.get("method").and_then(Value::as_str) == Some("notifications/initialized");
        // Taken here, before any later send spawns its POST.
        let gate = initialized
            .then(|| shared.initialized.clone().try_write_owned().ok())
            .flatten();
        let abandoned = CancellationToken::new();
        if let Some(id) = request {
            let modern = posted(&message).modern_version.is_some();
            lock(&shared.in_flight).insert(id, (abandoned.clone(), modern));
        }
        tokio::spawn(async move {
            let stop = shared.stop.clone();
            let post = async {
                match gate {
                    Some(_held) => shared.post_first(message).await,
                    None => shared.post(message, request, &incoming).await,
                }
            };
            tokio::select! {
                () = stop.cancelled() => {}
                () = abandoned.cancelled() => {}
                () = post => {}
            }
            if let Some(id) = request {
                lock(&shared.in_flight).remove(&id);
            }
        });
        true
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        let shared = self.shared.clone();
        Box::pin(async move {
            let session = lock(&shared.session).clone();
            if let Some(session) = session {
                // The spec's ending of a session; a server that refuses (405) keeps it.
                let deleted = tokio::time::timeout(
                    CONNECT_TIMEOUT,
                    shared.exchange(Method::DELETE, Some(session), None, Bytes::new()),
                );
                drop(deleted.await);
            }
            shared.end();
        })
    }

    fn close(&self) {
        self.shared.end();
    }

    fn describe(&self) -> String {
        self.shared.endpoint.url.clone()
    }

    fn names_requests(&self) -> bool {
        true
    }
}

/// How reading an answer's event stream went.
struct EventsRead {
    /// The request's answer came (or there was no request to answer).
    answered: bool,
    /// The stream ended in order: its connection may carry the next request.
    whole: bool,
}

/// The answer a request gets when the transport failed it: -32000, marked as the transport's
/// (`data.transport`), so a caller can tell it from an error the server sent.
fn transport_failure(id: u64, message: String) -> Incoming {
    let error = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32000, "message": message, "data": {"transport": true}},
    });
    Incoming {
        frame: error.to_string(),
        about: None,
    }
}

/// A header value for `text`: as it is when a header can carry it, else in the `=?base64?…?=`
/// form 2026-07-28 gives non-ASCII values.
fn header_text(text: &str) -> Option<HeaderValue> {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.trim() == text;
    if plain {
        return HeaderValue::from_str(text).ok();
    }
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    HeaderValue::from_str(&format!("=?base64?{encoded}?=")).ok()
}

/// What a POST carried, for the headers the 2026-07-28 routing checks.
struct Posted<'a> {
    method: Option<&'a str>,
    name: Option<String>,
    modern_version: Option<&'a str>,
}

fn posted(message: &Value) -> Posted<'_> {
    let method = message.get("method").and_then(Value::as_str);
    let params = message.get("params");
    let name = match method {
        Some("tools/call" | "prompts/get") => params.and_then(|p| p.get("name")),
        Some("resources/read") => params.and_then(|p| p.get("uri")),
        Some("tasks/get" | "tasks/update" | "tasks/cancel") => params.and_then(|p| p.get("taskId")),
        _ => None,
    }
    .and_then(Value::as_str)
    .map(str::to_owned);
    let modern_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    Posted {
        method,
        name,
        modern_version,
    }
}

impl Shared {
    /// Whether `message` cancels a 2026-07-28 request, which over HTTP is done by closing
    /// its stream (the spec's way; no notification is expected): then it is closed here.
    fn cancels_by_closing(&self, message: &Value) -> bool {
        if message.get("method").and_then(Value::as_str) != Some("notifications/cancelled") {
            return false;
        }
        let Some(id) = message
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(Value::as_u64)
        else {
            return false;
        };
        match lock(&self.in_flight).get(&id) {
            Some((abandoned, true)) => {
                abandoned.cancel();
                true
            }
            _ => false,
        }
    }

    fn end(&self) {
        self.stop.cancel();
        lock(&self.incoming).take();
        lock(&self.idle).clear();
    }

    async fn post(
        self: &Arc<Self>,
        message: Value,
        request: Option<u64>,
        incoming: &mpsc::Sender<Incoming>,
    ) {
        let body = Bytes::from(message.to_string());
        let about = posted(&message);
        let mut extra = Vec::new();
        if let Some(version) = about.modern_version {
            if let Ok(version) = HeaderValue::from_str(version) {
                *lock(&self.version) = Some(version);
            }
            if let Some(method) = about.method.and_then(|m| HeaderValue::from_str(m).ok()) {
                extra.push((HeaderName::from_static("mcp-method"), method));
            }
            if let Some(name) = about.name.as_deref().and_then(header_text) {
                extra.push((HeaderName::from_static("mcp-name"), name));
            }
        }
        let initializing = about.method == Some("initialize");
        if initializing {
            // Not the 2026-07-28 version a `server/discover` tried before it.
            lock(&self.version).take();
        }
        let answer = {
            // The handshake's end reaches the server first: one may refuse what comes before.
            let _after_initialized = self.initialized.read().await;
            let session = lock(&self.session).clone();
            self.exchange(Method::POST, session, Some(extra), body)
                .await
        };
        let fail = |message: String| async move {
            if let Some(id) = request {
                let _ = incoming.send(transport_failure(id, message)).await;
            }
        };
        let (response, connection) = match answer {
            Ok(answered) => answered,
            Err(err) => return fail(format!("{}: {err}", self.endpoint.url)).await,
        };
        let status = response.status();
        if initializing && let Some(session) = response.headers().get(SESSION_ID) {
            *lock(&self.session) = Some(session.clone());
        }
        let streamed = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if status == StatusCode::ACCEPTED {
            drop(response);
            return self.release(connection);
        }
        if streamed && status.is_success() {
            let read = self
                .read_events(response, request, initializing, incoming)
                .await;
            if read.answered {
                if read.whole {
                    self.release(connection);
                }
            } else {
                fail(format!(
                    "{}: the answer's stream ended before the answer (the server went away?)",
                    self.endpoint.url
                ))
                .await;
            }
            return;
        }
        let body = read_body(response).await;
        let body = match body {
            Ok(body) => {
                self.release(connection);
                body
            }
            Err(err) => return fail(format!("{}: {err}", self.endpoint.url)).await,
        };
        match serde_json::from_slice::<Value>(&body) {
            Ok(mut answer) if answer.is_object() || answer.is_array() => {
                // A refusal before the body was read (a 400 of the HTTP layer) may carry a null
                // id: it is still this request's answer.
                if let (Some(id), Some(error)) = (request, answer.get("error").cloned())
                    && answer.get("id").is_none_or(Value::is_null)
                {
                    answer = json!({"jsonrpc": "2.0", "id": id, "error": error});
                }
                if initializing {
                    self.negotiated(&answer);
                }
                if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
                    self.session_ended();
                }
                let _ = incoming
                    .send(Incoming {
                        frame: answer.to_string(),
                        about: request,
                    })
                    .await;
            }
            _ if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() => {
                fail(format!(
                    "{}: the server ended the session (404)",
                    self.endpoint.url
                ))
                .await;
                self.session_ended();
            }
            _ => {
                let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                fail(format!(
                    "{} answered HTTP {status}: {text}",
                    self.endpoint.url
                ))
                .await;
            }
        }
    }

    /// [`post`](Self::post) for the message every other waits for (it holds the gate).
    async fn post_first(self: &Arc<Self>, message: Value) {
        let body = Bytes::from(message.to_string());
        let session = lock(&self.session).clone();
        match self.exchange(Method::POST, session, None, body).await {
            Ok((response, connection)) => {
                if read_body(response).await.is_ok() {
                    self.release(connection);
                }
            }
            Err(err) => {
                tracing::warn!(server = %self.endpoint.url, %err, "notifications/initialized was not delivered");
            }
        }
    }

    /// The server forgot the session (it restarted, or expired it): the connection is over,
    /// and its owner connects again (the spec: a new `initialize`).
    fn session_ended(&self) {
        tracing::info!(server = %self.endpoint.url, "the server ended the session");
        self.end();
    }

    /// From the `initialize` answer: the version the headers carry from now on, and the
    /// server's notification stream opened.
    fn negotiated(self: &Arc<Self>, answer: &Value) {
        let version = answer
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .and_then(|v| HeaderValue::from_str(v).ok());
        if version.is_some() {
            *lock(&self.version) = version;
            if !self
                .listening
                .swap(true, std::sync::atomic::Ordering::AcqRel)
            {
                let shared = self.clone();
                tokio::spawn(async move {
                    let stop = shared.stop.clone();
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = shared.listen() => {}
                    }
                });
            }
        }
    }

    /// The legacy session's GET stream, for what the server says outside any request
    /// (`list_changed`, logs), opened again when it ends while the session lasts. A server
    /// that offers none (405) is left alone.
    async fn listen(self: &Arc<Self>) {
        let mut failures = 0u32;
        loop {
            let Some(incoming) = lock(&self.incoming).clone() else {
                return;
            };
            let session = lock(&self.session).clone();
            if session.is_none() {
                return; // a stateless server has no stream to offer
            }
            match self
                .exchange(Method::GET, session, None, Bytes::new())
                .await
            {
                Ok((response, _)) if response.status().is_success() => {
                    failures = 0;
                    self.read_events(response, None, false, &incoming).await;
                }
                Ok((response, _)) if response.status() == StatusCode::METHOD_NOT_ALLOWED => {
                    return;
                }
                Ok((response, _)) if response.status() == StatusCode::NOT_FOUND => {
                    return self.session_ended();
                }
                _ => failures = failures.saturating_add(1),
            }
            // Backing off, not waiting for an event: a server that closes the stream at once
            // (or is down for a while) would otherwise be asked again in a tight loop.
            tokio::time::sleep(Duration::from_millis(100 << failures.min(6))).await;
        }
    }

    /// Sends every event's data up, each tagged with the request the stream answers; after
    /// an `initialize` answer, takes what it negotiated.
    async fn read_events(
        self: &Arc<Self>,
        response: hyper::Response<hyper::body::Incoming>,
        request: Option<u64>,
        initializing: bool,
        incoming: &mpsc::Sender<Incoming>,
    ) -> EventsRead {
        let mut read = EventsRead {
            answered: request.is_none(),
            whole: false,
        };
        let mut body = response.into_body();
        let mut events = EventReader::default();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return read;
            };
            let Some(chunk) = frame.data_ref() else {
                continue;
            };
            let Some(datas) = events.push(chunk) else {
                tracing::warn!(server = %self.endpoint.url, "an event over {LARGEST_BODY} bytes: the stream is dropped");
                return read;
            };
            for data in datas {
                if let Some(id) = request
                    && let Ok(message) = serde_json::from_str::<Value>(&data)
                    && message.get("id").and_then(Value::as_u64) == Some(id)
                    && message.get("method").is_none()
                {
                    read.answered = true;
                    if initializing {
                        self.negotiated(&message);
                    }
                }
                let sent = incoming.send(Incoming {
                    frame: data,
                    about: request,
                });
                if sent.await.is_err() {
                    return read;
                }
            }
        }
        read.whole = true;
        read
    }

    /// A connection whose answer has been read, kept for the next POST.
    fn release(&self, connection: SendRequest<Full<Bytes>>) {
        if connection.is_closed() || self.stop.is_cancelled() {
            return;
        }
        let mut idle = lock(&self.idle);
        if idle.len() < IDLE_KEPT {
            idle.push(connection);
        }
    }

    /// One HTTP exchange on an idle connection or a new one: the answer, and the connection
    /// to [`release`](Self::release) once its body is read.
    async fn exchange(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        extra: Option<Vec<(HeaderName, HeaderValue)>>,
        body: Bytes,
    ) -> Result<
        (
            hyper::Response<hyper::body::Incoming>,
            SendRequest<Full<Bytes>>,
        ),
        String,
    > {
        let mut request = Request::builder()
            .method(method.clone())
            .uri(
                self.endpoint
                    .uri
                    .path_and_query()
                    .map_or("/", |p| p.as_str()),
            )
            .header(HOST, self.endpoint.authority.as_str());
        request = match method {
            Method::GET => request.header(ACCEPT, "text/event-stream"),
            _ => request
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json"),
        };
        for (name, value) in &self.endpoint.headers {
            request = request.header(name, value);
        }
        if let Some(session) = session {
            request = request.header(SESSION_ID, session);
        }
        if let Some(version) = lock(&self.version).clone() {
            request = request.header(PROTOCOL_VERSION, version);
        }
        for (name, value) in extra.into_iter().flatten() {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|err| format!("the request could not be built: {err}"))?;
        let mut sender = self.connection().await?;
        let answer = sender.send_request(request).await;
        answer
            .map(|response| (response, sender))
            .map_err(|err| err.to_string())
    }

    async fn connection(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        loop {
            let Some(mut sender) = lock(&self.idle).pop() else {
                break;
            };
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        let address = self.endpoint.address();
        let stream =
            tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(&address))
                .await
                .map_err(|_| format!("connecting to {address} took over {CONNECT_TIMEOUT:?}"))?
                .map_err(|err| format!("cannot connect to {address}: {err}"))?;
        let _ = stream.set_nodelay(true);
        #[cfg(feature = "https")]
        if let Some(tls) = &self.endpoint.tls {
            let secured = tokio::time::timeout(CONNECT_TIMEOUT, tls.connect(stream, &address))
                .await
                .map_err(|_| {
                    format!("the TLS handshake with {address} took over {CONNECT_TIMEOUT:?}")
                })??;
            return handshake(TokioIo::new(secured), &address).await;
        }
        handshake(TokioIo::new(stream), &address).await
    }
}

async fn read_body(response: hyper::Response<hyper::body::Incoming>) -> Result<Bytes, String> {
    let limited = http_body_util::Limited::new(response.into_body(), LARGEST_BODY);
    limited
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|err| format!("reading the answer failed: {err}"))
}

/// Splits a `text/event-stream` into its events' data (SSE: `data:` lines joined by newlines,
/// an event ended by a blank line; comments, ids and other fields skipped).
#[derive(Default)]
struct EventReader {
    pending: Vec<u8>,
}

impl EventReader {
    /// The data of every event completed by `chunk`; `None` when the event being read is past
    /// [`LARGEST_BODY`].
    fn push(&mut self, chunk: &[u8]) -> Option<Vec<String>> {
        self.pending.extend_from_slice(chunk);
        let mut datas = Vec::new();
        while let Some((event_end, next)) = event_boundary(&self.pending) {
            let event = String::from_utf8_lossy(&self.pending[..event_end]).into_owned();
            self.pending.drain(..next);
            let mut data = String::new();
            let mut has_data = false;
            for line in event.lines() {
                let line = line.trim_end_matches('\r');
                if let Some(value) = line.strip_prefix("data:") {
                    if has_data {
                        data.push('\n');
                    }
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                    has_data = true;
                }
            }
            if has_data && !data.trim().is_empty() {
                datas.push(data);
            }
        }
        (self.pending.len() <= LARGEST_BODY).then_some(datas)
    }
}

/// Where the first event in `bytes` ends and the next begins (a blank line: `\n\n` or
/// `\r\n\r\n`).
fn event_boundary(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = memchr::memmem::find(bytes, b"\n\n").map(|at| (at, at + 2));
    let crlf = memchr::memmem::find(bytes, b"\r\n\r\n").map(|at| (at, at + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// HTTP/1.1 over `io`, its connection driven by a task of its own.
async fn handshake<T>(io: T, address: &str) -> Result<SendRequest<Full<Bytes>>, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(io)
        .await
        .map_err(|err| format!("the HTTP handshake with {address} failed: {err}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_urls_are_secured_and_default_to_port_443() {
        let plain = Endpoint::parse("http://example.com/mcp", &[]).expect("http parses");
        assert_eq!(plain.address(), "example.com:80");
        #[cfg(feature = "https")]
        {
            assert!(plain.tls.is_none());
            let secure = Endpoint::parse("https://example.com/mcp", &[]).expect("https parses");
            assert!(secure.tls.is_some());
            assert_eq!(secure.address(), "example.com:443");
            let ported = Endpoint::parse("https://[::1]:8443/mcp", &[]).expect("https parses");
            assert_eq!(ported.address(), "[::1]:8443");
        }
        #[cfg(not(feature = "https"))]
        {
            let refused = Endpoint::parse("https://example.com/mcp", &[])
                .err()
                .map(|e| e.to_string());
            assert!(refused.is_some_and(|e| e.contains("`https` feature is off")));
        }
    }

    #[test]
    fn events_split_across_chunks_give_their_data() {
        let mut reader = EventReader::default();
        assert!(
            reader
                .push(b": comment\n\nid: 1\ndata: {\"a\"")
                .expect("bounded")
                .is_empty()
        );
        let got = reader
            .push(b":1}\n\nevent: message\r\ndata: x\r\ndata: y\r\n\r\ndata:")
            .expect("bounded");
        assert_eq!(got, ["{\"a\":1}", "x\ny"]);
    }

    #[test]
    fn a_url_that_cannot_be_spoken_to_is_refused_naming_why() {
        let other = Endpoint::parse("ftp://example.com/", &[])
            .err()
            .map(|e| e.to_string());
        assert!(other.is_some_and(|e| e.contains("not an http:// or https:// URL")));
        let header = Endpoint::parse("http://127.0.0.1:1/mcp", &[("bad name".into(), "v".into())])
            .err()
            .map(|e| e.to_string());
        assert!(header.is_some_and(|e| e.contains("not a header name")));
    }
}
