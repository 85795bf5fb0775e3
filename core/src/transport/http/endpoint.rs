//! One HTTP request in, one response out: the checks, then POST (in `post`), GET or DELETE.
#![allow(
    clippy::result_large_err,
    reason = "the Err side is the refusal to send, built once on a rare path"
)]

use crate::catalog::visibility::Viewer;
use crate::metrics::Limit;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::auth::METADATA_PATH;
use super::body::{Body, SseBody};
use super::forward::forward;
use super::guard::Guard;
use super::headers::{
    LAST_EVENT_HEADER, SESSION_HEADER, accepts, header_version, header_version_text, text_header,
};
use super::post;
use super::replies::{Reply, closing_refusal, method_not_allowed, refusal, sse_response};
use super::sessions::{Admission, Client, HttpSession, STANDALONE, SessionLimits, SessionTable};
use super::sse::{Outlet, SseStream, parse_event_id};
use crate::Server;
use crate::dispatch::{RequestStream, StreamItem, StreamReceiver};
use crate::protocol::ProtocolVersion;
use crate::wire::parse_frame;

/// A request body the endpoint can read: hyper's own, or any `http_body` a host's server gives.
pub(crate) trait RequestBody:
    hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send
{
}

impl<B> RequestBody for B where
    B: hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
{
}

pub(crate) struct Endpoint {
    pub(super) server: Server,
    pub(super) options: HttpOptions,
    /// Held while a session is taken over from another replica.
    adopting: Mutex<()>,
    guard: Guard,
    pub(super) sessions: SessionTable,
    pub(super) max_body: usize,
    pub(super) stop: CancellationToken,
    /// Mounted in a host's web server, which routed the request here: the path is not matched.
    mounted: bool,
}

/// One keep-alive connection's own state. Each request holds a clone of this, a count only
/// this connection's task writes, rather than of the endpoint that every connection (on every
/// core) shares; and a client that keeps to one session finds it here without the table's lock.
pub(crate) struct Connection {
    endpoint: Arc<Endpoint>,
    /// The peer's address: who holds the sessions opened here when no token names a subject.
    pub(super) peer: IpAddr,
    last_session: Mutex<Weak<HttpSession>>,
}

impl Connection {
    pub(crate) fn new(endpoint: Arc<Endpoint>, peer: IpAddr) -> Arc<Self> {
        Arc::new(Connection {
            endpoint,
            peer,
            last_session: Mutex::new(Weak::new()),
        })
    }

    pub(crate) async fn handle<B: RequestBody>(self: Arc<Self>, request: Request<B>) -> Reply {
        self.endpoint.handle(&self, request).await
    }

    /// The live session `id`, if `owner` may use it: the one this connection used last while
    /// it is still listed, else the table's; otherwise the 404 to send.
    pub(super) fn session(&self, id: &str, owner: Option<&str>) -> Result<Arc<HttpSession>, Reply> {
        let mut last = self.last_session.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(session) = last.upgrade()
            && &*session.id == id
            && session.is_listed()
            && session.owner.as_deref() == owner
        {
            return Ok(session);
        }
        let session = self.endpoint.session_of(id, owner)?;
        *last = Arc::downgrade(&session);
        Ok(session)
    }
}

impl Endpoint {
    pub(crate) fn new(
        server: Server,
        options: HttpOptions,
        local_addr: SocketAddr,
        stop: CancellationToken,
    ) -> Arc<Self> {
        let loopback = local_addr.ip().is_loopback();
        Endpoint::build(server, options, loopback, stop, false)
    }

    /// The endpoint of [`super::HttpEndpoint`]: no bound address to derive the Host guard from,
    /// so only loopback names pass unless `allowed_hosts` names the app's.
    pub(crate) fn mounted(
        server: Server,
        options: HttpOptions,
        stop: CancellationToken,
    ) -> Arc<Self> {
        Endpoint::build(server, options, true, stop, true)
    }

    fn build(
        server: Server,
        options: HttpOptions,
        loopback: bool,
        stop: CancellationToken,
        mounted: bool,
    ) -> Arc<Self> {
        let guard = Guard::new(&options.allowed_hosts, &options.allowed_origins, loopback);
        let mut options = options;
        if let Some(store) = &server.inner.event_store {
            options.event_store = store.clone();
        }
        let max_body = options
            .max_body_bytes
            .unwrap_or(server.inner.limits.max_frame_bytes);
        Arc::new(Endpoint {
            server,
            options,
            adopting: Mutex::new(()),
            guard,
            sessions: SessionTable::default(),
            max_body,
            stop,
            mounted,
        })
    }

    /// Whether answering never blocks or waits outside this process (the stores are the
    /// in-process ones), so a host's thread may drive an answer itself.
    pub(super) fn answers_in_process(&self) -> bool {
        self.server.inner.tasks.in_process() && self.options.event_store.in_process()
    }

    /// How long a client may take to send a request's body (`None`: no limit).
    pub(super) fn body_read_timeout(&self) -> Option<Duration> {
        self.options.body_read_timeout
    }

    pub(super) fn server(&self) -> &Server {
        &self.server
    }

    /// `GET` on the metrics path: the Prometheus text.
    fn metrics_reply(&self, method: &Method) -> Reply {
        if method != Method::GET {
            return method_not_allowed("GET");
        }
        let mut reply = Response::new(Body::full(self.server.metrics_text()));
        reply.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(crate::METRICS_CONTENT_TYPE),
        );
        reply
    }

    async fn handle<B: RequestBody>(&self, connection: &Connection, request: Request<B>) -> Reply {
        let headers = request.headers();
        if let Some(why) = ambiguous_framing(headers) {
            tracing::debug!(why, "refused a request framed ambiguously");
            return closing_refusal(StatusCode::BAD_REQUEST, why);
        }
        // An absolute-form target names the host itself, and the Host header is then ignored
        // (RFC 9112 §3.2.2): the target's authority is what the guard checks.
        let host = match request.uri().authority() {
            // Without a `user@` part, which names no host.
            Some(authority) => authority.as_str().rsplit('@').next(),
            None => text_header(headers, &header::HOST),
        };
        // Two Host headers could pass the check with one and route with the other.
        let single_host = headers.get_all(header::HOST).iter().count() <= 1;
        if !single_host || !self.guard.host_allowed(host) {
            tracing::debug!(?host, "refused a request for a host not allowed");
            return refusal(StatusCode::FORBIDDEN, "Forbidden: Host header not allowed");
        }
        if !self
            .guard
            .origin_allowed(text_header(headers, &header::ORIGIN))
        {
            return refusal(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed");
        }
        let path = request.uri().path();
        if let Some(auth) = &self.options.auth
            && (path == METADATA_PATH
                || path.strip_prefix(METADATA_PATH) == Some(&self.options.path))
        {
            return if request.method() == Method::GET {
                auth.resource_metadata(host, &self.options.path)
            } else {
                method_not_allowed("GET")
            };
        }
        if !self.mounted && self.options.metrics_path.as_deref() == Some(path) {
            return self.metrics_reply(request.method());
        }
        if !self.mounted && path != self.options.path {
            return refusal(StatusCode::NOT_FOUND, "Not Found");
        }
        let who = match &self.options.auth {
            None => Viewer::default(),
            Some(auth) => match auth.authorize(headers, host, &self.options.path).await {
                Ok(who) => who,
                Err(reply) => return reply,
            },
        };
        let owner = who.subject.clone();
        // 2026-07-28 is POST only; a GET or DELETE naming it is refused, whatever the mode.
        let modern_version = header_version_text(request.headers())
            .and_then(ProtocolVersion::parse)
            .is_some_and(ProtocolVersion::is_stateless);
        match *request.method() {
            Method::POST => post::post(self, connection, request, who).await,
            _ if modern_version => method_not_allowed("POST"),
            Method::GET if self.options.stateless => method_not_allowed("POST"),
            Method::GET => self.get(&request, owner),
            Method::DELETE if self.options.stateless => method_not_allowed("POST"),
            Method::DELETE => self.delete(&request, owner),
            _ if self.options.stateless => method_not_allowed("POST"),
            _ => method_not_allowed("GET, POST, DELETE"),
        }
    }

    /// An SSE answer on a resumable stream of the session.
    pub(super) fn answer_sse(
        &self,
        http_session: &Arc<HttpSession>,
        ready: Vec<StreamItem>,
        items: StreamReceiver,
    ) -> Reply {
        let sse = http_session.open_stream();
        let priming = http_session
            .session
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
        let reply = self.sse_reply(&sse, priming);
        let http_session = http_session.clone();
        // Begun here, while the POST's own request still holds the session open.
        let busy = http_session.begin_request();
        tokio::spawn(async move {
            let _busy = busy;
            forward(&sse, ready, items).await;
            http_session.close_stream(&sse);
        });
        reply
    }

    pub(super) fn sse_reply(&self, sse: &SseStream, priming: bool) -> Reply {
        let (connection, body) = self.outlet();
        sse.attach(connection, priming);
        sse_response(body.counted(self.server.inner.metrics.stream_opened()))
    }

    /// A new connection's end of an SSE stream, bounded by `max_sse_buffered_bytes`.
    fn outlet(&self) -> (Outlet, SseBody) {
        Outlet::open(
            self.options.max_sse_buffered_bytes,
            self.options.sse_keep_alive,
        )
    }

    fn get<B>(&self, request: &Request<B>, owner: Option<String>) -> Reply {
        let headers = request.headers();
        if !accepts(headers, "text/event-stream") {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: the client must accept text/event-stream",
            );
        }
        if let Err(reply) = header_version(headers) {
            return reply;
        }
        let Some(id) = text_header(headers, &SESSION_HEADER) else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            );
        };
        let http_session = match self.session_of(id, owner.as_deref()) {
            Ok(session) => session,
            Err(reply) => return reply,
        };
        let Some(_busy) = http_session.begin_request() else {
            return session_gone();
        };
        let (connection, body) = self.outlet();
        if let Some(last) = text_header(headers, &LAST_EVENT_HEADER) {
            let Some((name, after)) = parse_event_id(last) else {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: malformed Last-Event-ID",
                );
            };
            let resumed = match http_session.stream(name) {
                Some(stream) => stream.resume(connection, after).is_ok(),
                None => self.replay_ended(&http_session, name, after, connection),
            };
            if !resumed {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the events after Last-Event-ID are no longer available",
                );
            }
        } else {
            if http_session.standalone.is_attached() {
                return refusal(
                    StatusCode::CONFLICT,
                    "Conflict: the session's standalone stream is already open",
                );
            }
            let priming = http_session
                .session
                .protocol_version()
                .is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
            http_session.standalone.attach(connection, priming);
        }
        sse_response(body.counted(self.server.inner.metrics.stream_opened()))
    }

    /// Replays a finished POST stream from the store; false if it is not there. The body ends
    /// after the replay (the connection's sender is dropped here).
    fn replay_ended(
        &self,
        http_session: &HttpSession,
        name: &str,
        after: u64,
        connection: Outlet,
    ) -> bool {
        let events = (name != STANDALONE)
            .then(|| {
                self.options
                    .event_store
                    .replay(&http_session.id, name, after)
            })
            .flatten();
        let Some(events) = events else {
            return false;
        };
        for (seq, message) in events {
            connection.send_replayed(super::sse::event(name, Some(seq), &message));
        }
        true
    }

    fn delete<B>(&self, request: &Request<B>, owner: Option<String>) -> Reply {
        let headers = request.headers();
        let Some(id) = text_header(headers, &SESSION_HEADER) else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            );
        };
        if let Err(reply) = self.session_of(id, owner.as_deref()) {
            return reply;
        }
        if let Some(session) = self.sessions.remove(id) {
            session.terminate();
        }
        Response::new(Body::empty())
    }

    /// The live session `id`, if `owner` may use it; otherwise the 404 to send.
    fn session_of(&self, id: &str, owner: Option<&str>) -> Result<Arc<HttpSession>, Reply> {
        match self.sessions.get(id) {
            Some(session) if session.owner.as_deref() == owner => Ok(session),
            Some(_) => Err(session_gone()),
            None => self.adopt(id, owner).ok_or_else(session_gone),
        }
    }

    pub(super) fn session_limits(&self) -> SessionLimits {
        SessionLimits {
            max: self.options.max_sessions,
            per_client: self.options.max_sessions_per_client,
        }
    }

    /// Takes over session `id` from a replica that is gone, when the shared event store kept
    /// its record: a session like it is opened here under the same id (its `initialize` run
    /// again, the answer dropped), so the client goes on, and resumes its streams, here.
    fn adopt(&self, id: &str, owner: Option<&str>) -> Option<Arc<HttpSession>> {
        // One takeover at a time: a client back after a failover often sends its GET and a POST
        // at once, and the session is to be taken over once.
        let _one = self.adopting.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(session) = self.sessions.get(id) {
            return (session.owner.as_deref() == owner).then_some(session);
        }
        let record = self.options.event_store.recall_session(id)?;
        let record: serde_json::Value = serde_json::from_str(&record).ok()?;
        if record["owner"].as_str() != owner {
            return None;
        }
        let http_session = HttpSession::open(
            &self.server,
            owner.map(str::to_owned),
            // The peer's address is not known here: the owner (if any) is its client.
            Client::new(owner, IpAddr::from([0, 0, 0, 0])),
            self.options.event_store.clone(),
            self.options.sse_retry,
            Some(id),
        )
        .ok()?;
        let session = &http_session.session;
        let initialize = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": record["initialize"],
        });
        let frame = parse_frame(initialize.to_string().as_bytes(), &self.server.inner.limits);
        let (stream, _answer) = RequestStream::new(1, false);
        session.handle_parsed(frame, Some(stream));
        session.handle_frame(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        if session.protocol_version().is_none() {
            // Not ended with `terminate`: the record stays in the store, as it was found.
            session.close();
            return None;
        }
        match self
            .sessions
            .insert(http_session.clone(), self.session_limits())
        {
            Admission::Admitted { evicted } => {
                if let Some(evicted) = evicted {
                    evicted.terminate();
                }
                tracing::info!(session = id, "took over a session from another replica");
                Some(http_session)
            }
            Admission::ClientFull | Admission::TableFull => {
                self.server.inner.metrics.refused(Limit::Sessions);
                http_session.terminate();
                None
            }
        }
    }

    /// Ends the sessions idle for the configured time, now and then.
    pub(crate) async fn reap_idle_sessions(self: Arc<Self>) {
        let Some(limit) = self.options.session_idle_timeout else {
            return;
        };
        let period = (limit / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(period) => {}
            }
            for session in self.sessions.take_idle(limit) {
                tracing::debug!(session = %session.id, "ending an idle session");
                session.terminate();
            }
        }
    }

    /// Shutdown: every session drains its calls, then ends.
    pub(crate) async fn end_all_sessions(&self) {
        let sessions = self.sessions.take_all();
        futures_util::future::join_all(sessions.iter().map(|s| s.end())).await;
    }
}

/// The answer to a request for a session that does not exist (any more).
pub(super) fn session_gone() -> Reply {
    refusal(
        StatusCode::NOT_FOUND,
        "Not Found: unknown or expired session; initialize a new one",
    )
}

/// Why a request's body framing could be read two ways (RFC 9112 §6.3), if it could:
/// `Transfer-Encoding` given in two header lines, which hyper reads as one list. A proxy in
/// front of us might take only one of them and see a second request where we see a body
/// (request smuggling). Hyper refuses the other shapes itself: an encoding list not ending in
/// `chunked`, differing `Content-Length`s; and with both `Transfer-Encoding` and
/// `Content-Length` it reads the body as chunked and closes the connection after the answer.
fn ambiguous_framing(headers: &hyper::HeaderMap) -> Option<&'static str> {
    (headers.get_all(header::TRANSFER_ENCODING).iter().count() > 1)
        .then_some("Bad Request: Transfer-Encoding given more than once")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_endpoint() -> Arc<Endpoint> {
        let server = Server::builder("t", "1").build().expect("server");
        Endpoint::new(
            server,
            HttpOptions::default(),
            "127.0.0.1:1".parse().expect("addr"),
            CancellationToken::new(),
        )
    }

    /// A session of client "ann", owned by `owner` (not yet listed in the table).
    fn open_session(endpoint: &Endpoint, owner: Option<&str>) -> Arc<HttpSession> {
        let options = &endpoint.options;
        let opened = HttpSession::open(
            &endpoint.server,
            owner.map(str::to_owned),
            Client::Subject("ann".into()),
            options.event_store.clone(),
            options.sse_retry,
            None,
        );
        let Ok(session) = opened else {
            panic!("no session opened");
        };
        session
    }

    /// While anything still holds the session (a request or stream of another connection),
    /// the remembered one must not outlive its place in the table.
    #[tokio::test]
    async fn a_connection_forgets_a_session_the_table_no_longer_lists() {
        let endpoint = test_endpoint();
        let held = open_session(&endpoint, Some("ann"));
        let limits = SessionLimits {
            max: 8,
            per_client: 8,
        };
        assert!(matches!(
            endpoint.sessions.insert(held.clone(), limits),
            Admission::Admitted { evicted: None }
        ));
        let peer = "127.0.0.1".parse().expect("addr");
        let connection = Connection::new(endpoint.clone(), peer);

        assert!(connection.session(&held.id, Some("ann")).is_ok());
        assert!(connection.session(&held.id, Some("bob")).is_err(), "owner");
        assert!(connection.session(&held.id, Some("ann")).is_ok());
        assert!(connection.session("other", Some("ann")).is_err(), "id");
        assert!(endpoint.sessions.remove(&held.id).is_some());
        let gone = connection.session(&held.id, Some("ann"));
        assert_eq!(
            gone.err().map(|reply| reply.status()),
            Some(StatusCode::NOT_FOUND)
        );
    }

    /// A session is ended to make room only when no request is on it, and once claimed for
    /// that, no request can begin on it (the request gets the 404 of a session gone).
    #[tokio::test]
    async fn a_session_with_a_request_on_it_is_not_evicted_and_an_evicted_one_takes_none() {
        let endpoint = test_endpoint();
        let open = || open_session(&endpoint, None);
        let one_each = SessionLimits {
            max: 8,
            per_client: 1,
        };
        let first = open();
        assert!(matches!(
            endpoint.sessions.insert(first.clone(), one_each),
            Admission::Admitted { evicted: None }
        ));
        let busy = first
            .begin_request()
            .expect("a live session takes requests");
        assert!(matches!(
            endpoint.sessions.insert(open(), one_each),
            Admission::ClientFull
        ));
        drop(busy);
        match endpoint.sessions.insert(open(), one_each) {
            Admission::Admitted {
                evicted: Some(evicted),
            } => assert_eq!(evicted.id, first.id),
            _ => panic!("the idle first session makes room"),
        }
        assert!(
            first.begin_request().is_none(),
            "claimed: no request begins"
        );
    }

    /// Of a client's idle sessions the least recently used makes room, whatever order they
    /// were opened in, and a busy one is passed over for the next in that order.
    #[tokio::test]
    async fn the_least_recently_used_idle_session_makes_room() {
        let endpoint = test_endpoint();
        let three = SessionLimits {
            max: 8,
            per_client: 3,
        };
        let sessions: Vec<_> = (0..3).map(|_| open_session(&endpoint, None)).collect();
        for (session, last_active) in sessions.iter().zip([300, 100, 200]) {
            session.set_last_active(last_active);
            assert!(matches!(
                endpoint.sessions.insert(session.clone(), three),
                Admission::Admitted { evicted: None }
            ));
        }
        // Newcomers count as used after all of them; the session each one evicts.
        let evicted_by_a_newcomer = || {
            let newcomer = open_session(&endpoint, None);
            newcomer.set_last_active(1_000);
            match endpoint.sessions.insert(newcomer, three) {
                Admission::Admitted {
                    evicted: Some(evicted),
                } => evicted.id.clone(),
                _ => panic!("an idle session makes room"),
            }
        };
        let busy = sessions[1]
            .begin_request()
            .expect("a live session takes requests");
        // A request marks it used now; kept the oldest, so that only its being busy spares it.
        sessions[1].set_last_active(100);
        assert_eq!(
            evicted_by_a_newcomer(),
            sessions[2].id,
            "the oldest idle one"
        );
        drop(busy);
        sessions[1].set_last_active(100);
        assert_eq!(
            evicted_by_a_newcomer(),
            sessions[1].id,
            "idle again, and the oldest"
        );
    }
}
