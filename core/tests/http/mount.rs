//! The endpoint mounted in a web server of the host's own (`Server::http_endpoint`): the same
//! answers as `serve_http`'s, whatever path the app routed, a Host guard that stays loopback-only
//! unless told the app's names, request bodies fed chunk by chunk with their limit, a
//! 2026-07-28 request cancelled when its response is dropped, and sessions ended by shutdown.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolwire::transport::http::{HttpBody, HttpEndpoint, HttpExchange, HttpOptions};
use toolwire::{Context, Server, Tool, ToolOutput};

use super::support::{gate, test_server};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";

fn post(path: &str, host: &str, session: Option<&str>, body: &Value) -> Request<Full<Bytes>> {
    let mut request = Request::post(path)
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request")
}

async fn json_of(response: Response<HttpBody>) -> Value {
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    serde_json::from_slice(&bytes).expect("JSON body")
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mount-test", "version": "1"}}})
}

#[tokio::test]
async fn a_mounted_endpoint_serves_sessions_on_whatever_path_the_app_routed() {
    let (hold, _gate) = gate();
    let server = test_server(hold);
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("in a runtime");
    let opened = endpoint
        .handle(
            post("/apps/weather/mcp", "localhost:8000", None, &initialize()),
            None,
        )
        .await;
    assert_eq!(opened.status(), StatusCode::OK);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    assert_eq!(
        json_of(opened).await["result"]["serverInfo"]["name"],
        "http-test"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = endpoint
        .handle(post("/", "localhost", Some(&session), &initialized), None)
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "mounted"}}});
    let answer = json_of(
        endpoint
            .handle(post("/x", "127.0.0.1:9", Some(&session), &call), None)
            .await,
    )
    .await;
    assert_eq!(answer["result"]["content"][0]["text"], "mounted");

    endpoint.shutdown().await;
    let gone = endpoint
        .handle(post("/x", "localhost", Some(&session), &call), None)
        .await;
    assert_eq!(
        gone.status(),
        StatusCode::NOT_FOUND,
        "shutdown ended the session"
    );
}

#[tokio::test]
async fn the_host_guard_stays_loopback_only_unless_the_apps_names_are_allowed() {
    let (hold, _gate) = gate();
    let server = test_server(hold);
    let strict = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let refused = strict
        .handle(post("/mcp", "mcp.example.com", None, &initialize()), None)
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    let mut options = HttpOptions::default();
    options.allowed_hosts = vec!["mcp.example.com".into()];
    let named = server.http_endpoint(options).expect("runtime");
    let served = named
        .handle(post("/mcp", "mcp.example.com", None, &initialize()), None)
        .await;
    assert_eq!(served.status(), StatusCode::OK);
    let other = named
        .handle(post("/mcp", "evil.example.net", None, &initialize()), None)
        .await;
    assert_eq!(other.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_body_fed_in_chunks_is_read_with_its_limit() {
    let (hold, _gate) = gate();
    let server = test_server(hold);
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(256);
    let endpoint = Arc::new(server.http_endpoint(options).expect("runtime"));
    let headers: [(&[u8], &[u8]); 3] = [
        (b"host", b"localhost"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
    ];

    let body = initialize().to_string();
    let (request, sender) = HttpEndpoint::request("POST", "/mcp", headers).expect("request");
    let answering = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.handle(request, None).await }
    });
    for chunk in body.as_bytes().chunks(7) {
        assert!(sender.send(Bytes::copy_from_slice(chunk)).await);
    }
    drop(sender);
    let answer = answering.await.expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        json_of(answer).await["result"]["serverInfo"]["name"],
        "http-test"
    );

    let (request, sender) = HttpEndpoint::request("POST", "/mcp", headers).expect("request");
    let answering = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.handle(request, None).await }
    });
    // Past the limit the endpoint stops reading and answers 413; the sender learns it.
    let mut refused_at = None;
    for n in 0..100 {
        if !sender.send(Bytes::from_static(b"0123456789")).await {
            refused_at = Some(n);
            break;
        }
    }
    assert!(refused_at.is_some(), "the endpoint stopped taking the body");
    assert_eq!(
        answering.await.expect("answered").status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );

    let (request, sender) = HttpEndpoint::request("POST", "/mcp", headers).expect("request");
    let answering = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.handle(request, None).await }
    });
    assert!(sender.send(Bytes::from_static(b"{\"jsonrpc\"")).await);
    sender.abort();
    assert_eq!(
        answering.await.expect("answered").status(),
        StatusCode::BAD_REQUEST
    );

    let bad = HttpEndpoint::request("POST", "/mcp", [(&b"bad header"[..], &b"x"[..])]);
    assert!(
        bad.is_err_and(|e| e.to_string().contains("bad HTTP header name")),
        "a bad header is refused"
    );
}

/// Tells the test when it is dropped (with the handler holding it).
struct SignalOnDrop(Arc<Notify>);

impl Drop for SignalOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A server whose tool `wait` reports progress, says it `started`, and then waits forever; its
/// handler being dropped notifies `dropped`.
fn waiting_server(started: Option<Arc<Notify>>, dropped: Arc<Notify>) -> Server {
    Server::builder("mount", "1")
        .tool(Tool::new("wait"), move |ctx: Context, _args: Value| {
            let guard = SignalOnDrop(dropped.clone());
            let started = started.clone();
            async move {
                let _guard = guard;
                ctx.progress(1.0, None, None);
                if let Some(started) = started {
                    started.notify_one();
                }
                std::future::pending::<()>().await;
                Ok(ToolOutput::text("never"))
            }
        })
        .build()
        .expect("server")
}

/// Dropping a 2026-07-28 request's response is the client hanging up: its handler is dropped.
#[tokio::test]
async fn dropping_a_modern_response_cancels_the_request() {
    let started = Arc::new(Notify::new());
    let dropped = Arc::new(Notify::new());
    let server = waiting_server(Some(started.clone()), dropped.clone());
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "wait", "arguments": {},
        "_meta": {PV: "2026-07-28", CC: {}, "progressToken": "p"}}});
    let request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "wait")
        .body(Full::new(Bytes::from(call.to_string())))
        .expect("request");
    let response = endpoint.handle(request, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    started.notified().await;
    let first = body.next_chunk().await.expect("the progress event");
    assert!(String::from_utf8_lossy(&first).contains("notifications/progress"));
    drop(body);
    dropped.notified().await;
}

/// The step-by-step form bindings use: the body fed, the head and chunks read, a hang-up
/// mid-stream dropping a 2026-07-28 request's handler.
#[tokio::test]
async fn an_exchange_is_driven_step_by_step_and_hung_up() {
    let dropped = Arc::new(Notify::new());
    let server = waiting_server(None, dropped.clone());
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let headers: [(&[u8], &[u8]); 3] = [
        (b"host", b"localhost"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
    ];

    let opening = endpoint
        .exchange("POST", "/mcp", headers, None)
        .expect("exchange");
    for chunk in initialize().to_string().as_bytes().chunks(16) {
        assert!(opening.send_body(Bytes::copy_from_slice(chunk)).await);
    }
    opening.end_body();
    assert!(
        !opening.send_body(Bytes::from_static(b"x")).await,
        "no body after its end"
    );
    let head = opening
        .response()
        .await
        .expect("head")
        .expect("not hung up");
    assert_eq!(head.status, 200);
    assert!(
        head.headers
            .iter()
            .any(|(name, _)| name == "mcp-session-id")
    );
    // A JSON answer comes whole with its head, its length said.
    let body = head.body.clone().expect("a complete body");
    assert!(head.headers.iter().any(
        |(name, value)| name == "content-length" && value == body.len().to_string().as_bytes()
    ));
    assert!(opening.next_chunk().await.is_none(), "nothing to stream");
    let answer: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(answer["result"]["serverInfo"]["name"], "mount");
    assert!(opening.response().await.is_err(), "the head is taken once");

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "wait", "arguments": {},
        "_meta": {PV: "2026-07-28", CC: {}, "progressToken": "p"}}});
    let modern: [(&[u8], &[u8]); 6] = [
        (b"host", b"localhost"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"wait"),
    ];
    let waiting = endpoint
        .exchange("POST", "/mcp", modern, None)
        .expect("exchange");
    assert!(waiting.send_body(Bytes::from(call.to_string())).await);
    waiting.end_body();
    assert_eq!(
        waiting
            .response()
            .await
            .expect("head")
            .expect("live")
            .status,
        200
    );
    let first = waiting.next_chunk().await.expect("the progress event");
    assert!(String::from_utf8_lossy(&first).contains("notifications/progress"));
    waiting.hang_up();
    assert!(
        waiting.next_chunk().await.is_none(),
        "nothing after the hang-up"
    );
    dropped.notified().await;
}

const JSON_HEADERS: [(&[u8], &[u8]); 3] = [
    (b"host", b"localhost"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
];

/// `body` POSTed with its body held whole, through [`HttpEndpoint::answer`], in `session`
/// (none: an `initialize`).
fn answer_post(endpoint: &HttpEndpoint, session: Option<&str>, body: &Value) -> HttpExchange {
    let headers = match session {
        Some(session) => with_session(session),
        None => JSON_HEADERS.to_vec(),
    };
    endpoint
        .answer("POST", "/mcp", headers, Bytes::from(body.to_string()), None)
        .expect("answer")
}

/// The session id a response head names.
fn session_of(head: &toolwire::transport::http::ResponseHead) -> String {
    head.headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| String::from_utf8(value.clone()).expect("text"))
        .expect("a session")
}

fn with_session(session: &str) -> Vec<(&[u8], &[u8])> {
    let mut headers = JSON_HEADERS.to_vec();
    headers.push((b"mcp-session-id", session.as_bytes()));
    headers.push((b"mcp-protocol-version", b"2025-11-25"));
    headers
}

/// `answer`: a request whose body the host holds whole is answered on the caller's thread when
/// no handler must run (the handshake, a notification, a DELETE), complete with its length;
/// one that waits for a handler goes on in the runtime and comes whole from `response`.
#[tokio::test]
async fn a_whole_request_is_answered_at_once_when_no_handler_runs() {
    let dropped = Arc::new(Notify::new());
    let server = waiting_server(None, dropped.clone());
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");

    let opened = answer_post(&endpoint, None, &initialize());
    let head = opened.complete_response().expect("answered at once");
    assert_eq!(head.status, 200);
    let body = head.body.clone().expect("whole");
    let length = head
        .headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .map(|(_, value)| value.clone());
    assert_eq!(length, Some(body.len().to_string().into_bytes()));
    let session = session_of(&head);
    let answer: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(answer["result"]["serverInfo"]["name"], "mount");
    assert!(opened.response().await.is_err(), "taken already");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = answer_post(&endpoint, Some(&session), &initialized)
        .complete_response()
        .expect("answered at once");
    assert_eq!(accepted.status, 202);

    // A handler that never ends: not complete now; the head comes later, here with an SSE body
    // (its progress), which streams.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "wait", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let waiting = answer_post(&endpoint, Some(&session), &call);
    assert!(waiting.complete_response().is_none(), "a handler runs");
    let head = waiting.response().await.expect("head").expect("live");
    assert_eq!(head.status, 200);
    assert!(head.body.is_none(), "an SSE answer streams");
    // After the stream's priming event (an id to resume from), the progress.
    let mut events = String::new();
    while !events.contains("notifications/progress") {
        let chunk = waiting.next_chunk().await.expect("the progress event");
        events.push_str(&String::from_utf8_lossy(&chunk));
    }
    waiting.hang_up();

    // A refusal needs no handler either: an unknown session's 404, complete.
    let gone = endpoint
        .answer(
            "POST",
            "/mcp",
            with_session("no-such-session"),
            Bytes::from(call.to_string()),
            None,
        )
        .expect("answer")
        .complete_response()
        .expect("answered at once");
    assert_eq!(gone.status, 404);

    let deleted = endpoint
        .answer("DELETE", "/mcp", with_session(&session), Bytes::new(), None)
        .expect("answer")
        .complete_response()
        .expect("answered at once");
    assert!(matches!(deleted.status, 200 | 204), "{}", deleted.status);
    assert!(
        endpoint
            .answer("BAD METHOD", "/mcp", JSON_HEADERS, Bytes::new(), None)
            .is_err(),
        "a bad method is refused, naming it"
    );
}

/// A task store that may block (a shared one): answers then never run on the host's thread.
struct SharedLike(toolwire::tasks::MemoryTaskStore);

impl toolwire::TaskStore for SharedLike {
    fn insert(
        &self,
        task: toolwire::tasks::TaskRecord,
        max_tasks: usize,
        max_per_principal: usize,
    ) -> Result<(), toolwire::Error> {
        self.0.insert(task, max_tasks, max_per_principal)
    }
    fn get(&self, id: &str) -> Result<Option<toolwire::tasks::TaskRecord>, toolwire::Error> {
        self.0.get(id)
    }
    fn update(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut toolwire::tasks::TaskRecord),
    ) -> Result<Option<toolwire::tasks::TaskRecord>, toolwire::Error> {
        self.0.update(id, change)
    }
    fn purge_expired(&self, now: std::time::SystemTime) -> usize {
        self.0.purge_expired(now)
    }
}

#[tokio::test]
async fn a_server_with_a_store_that_may_block_answers_on_the_runtime() {
    let server = Server::builder("mount", "1")
        .task_store(Arc::new(SharedLike(
            toolwire::tasks::MemoryTaskStore::default(),
        )))
        .build()
        .expect("server");
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let opened = answer_post(&endpoint, None, &initialize());
    assert!(
        opened.complete_response().is_none(),
        "not on the caller's thread"
    );
    let head = opened.response().await.expect("head").expect("live");
    assert_eq!(head.status, 200);
    let answer: Value = serde_json::from_slice(&head.body.expect("whole")).expect("JSON");
    assert_eq!(answer["result"]["serverInfo"]["name"], "mount");
}

/// `try_send_body`: a chunk taken when there is room, handed back when there is none, refused
/// once the body ended.
#[tokio::test]
async fn a_body_chunk_is_offered_without_waiting() {
    let (hold, _gate) = gate();
    let server = test_server(hold);
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let exchange = endpoint
        .exchange("POST", "/mcp", JSON_HEADERS, None)
        .expect("exchange");
    let mut taken = 0;
    let handed_back = loop {
        match exchange.try_send_body(Bytes::from_static(b" ")) {
            Ok(true) => taken += 1,
            Ok(false) => panic!("the endpoint reads the body"),
            Err(chunk) => break chunk,
        }
        assert!(taken <= 64, "the endpoint bounds what waits");
    };
    assert_eq!(&handed_back[..], b" ");
    exchange.end_body();
    assert_eq!(
        exchange.try_send_body(Bytes::from_static(b"x")),
        Ok(false),
        "no body after its end"
    );
}

/// `ready_response` and `ready_chunks`: the head of an SSE answer opened on the caller's thread
/// is there with no wait, what of its stream is ready comes joined, and the end is told, so a
/// host waits only for what is not there yet.
#[tokio::test]
async fn what_is_ready_is_taken_without_waiting() {
    let (hold, mut gate) = gate();
    let server = test_server(hold);
    let endpoint = server
        .http_endpoint(HttpOptions::default())
        .expect("runtime");
    let opened = answer_post(&endpoint, None, &initialize());
    let head = opened.ready_response().expect("answered at once");
    assert!(head.body.is_some(), "whole");
    assert_eq!(
        opened.ready_chunks(1 << 20),
        (Bytes::new(), true),
        "no stream"
    );
    let session = session_of(&head);

    // A call held in its handler: the SSE head is ready at once, the stream not ended.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "held", "arguments": {}}});
    let held = answer_post(&endpoint, Some(&session), &call);
    let head = held.ready_response().expect("the SSE head, at once");
    assert_eq!(head.status, 200);
    assert!(head.body.is_none(), "it streams");
    assert!(held.ready_response().is_none(), "taken once");
    let (mut events, ended) = held.ready_chunks(1 << 20);
    assert!(!ended, "the call goes on");
    gate.started().await;
    gate.release();
    // Each wait is for a chunk not there yet; what follows it, up to the end, comes with it.
    let mut ended = false;
    while !ended {
        let Some(chunk) = held.next_chunk().await else {
            break;
        };
        let (more, end) = held.ready_chunks(1 << 20);
        ended = end;
        events = [events, chunk, more].concat().into();
    }
    let text = String::from_utf8_lossy(&events);
    assert!(
        text.contains(r#""id":1"#) && text.contains("result"),
        "{text}"
    );
    assert_eq!(held.ready_chunks(1 << 20), (Bytes::new(), true), "ended");

    // A client that hung up: nothing is ready, the stream is over.
    let gone = answer_post(&endpoint, Some(&session), &call);
    gone.hang_up();
    assert!(gone.ready_response().is_none());
    assert_eq!(gone.ready_chunks(1 << 20), (Bytes::new(), true));
}
