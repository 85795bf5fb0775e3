//! Streamable HTTP from the outside: a real hyper client against `Server::serve_http` on
//! 127.0.0.1: status codes of every refusal, sessions and their isolation, SSE streams and
//! resumption, stateless mode, Host/Origin checks, bearer tokens, idle reaping, and many
//! sessions at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use toolwire::transport::http::{
    AuthRejection, BearerAuth, EventStore, HttpOptions, HttpServer, MemoryEventStore, ResponseMode,
    TokenInfo,
};
use toolwire::{Context, RequestOptions, Server, Tool, ToolError, ToolOutput};

/// The test's side of the `held` and `poll` tools: their calls say when they have started,
/// then wait until the test releases them.
struct Gate {
    started: mpsc::UnboundedReceiver<()>,
    release: Arc<Semaphore>,
}

/// The tools' side of a [`Gate`].
#[derive(Clone)]
struct Hold {
    started: mpsc::UnboundedSender<()>,
    release: Arc<Semaphore>,
}

fn gate() -> (Hold, Gate) {
    let (started_tx, started) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let hold = Hold {
        started: started_tx,
        release: release.clone(),
    };
    (hold, Gate { started, release })
}

impl Hold {
    /// Says the call has started, then waits until the test releases it.
    async fn wait(&self) {
        let _ = self.started.send(());
        self.release
            .acquire()
            .await
            .expect("the gate stays open")
            .forget();
    }
}

impl Gate {
    /// Waits until a held call has started.
    async fn started(&mut self) {
        tokio::time::timeout(Duration::from_secs(10), self.started.recv())
            .await
            .expect("a held call started within 10 s")
            .expect("the tools are alive");
    }

    /// Lets one held call go on.
    fn release(&self) {
        self.release.add_permits(1);
    }
}

/// The tools. `steps` takes its time (its sleeps are its workload); `held` and `poll` run until
/// the test's [`Gate`] lets them go on.
fn test_server(hold: Hold) -> Server {
    Server::builder("http-test", "1")
        .tool(Tool::new("echo"), |_ctx: Context, args: Value| async move {
            Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default().to_owned()))
        })
        .tool(Tool::new("steps"), |ctx: Context, args: Value| async move {
            let steps = args["steps"].as_u64().unwrap_or(3);
            for step in 1..=steps {
                ctx.progress(step as f64, Some(steps as f64), None);
                ctx.log(toolwire::LogLevel::Info, json!({"step": step, "tag": args["tag"]}));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(ToolOutput::text(format!("done {}", args["tag"])))
        })
        .tool(Tool::new("held"), {
            let hold = hold.clone();
            move |ctx: Context, _args: Value| {
                let hold = hold.clone();
                async move {
                    ctx.progress(1.0, Some(2.0), None);
                    hold.wait().await;
                    ctx.progress(2.0, Some(2.0), None);
                    Ok(ToolOutput::text("released"))
                }
            }
        })
        .tool(Tool::new("poll"), move |ctx: Context, _args: Value| {
            let hold = hold.clone();
            async move {
                ctx.progress(1.0, Some(2.0), None);
                // The client is to come back for the rest (SSE polling).
                ctx.close_sse_stream();
                hold.wait().await;
                ctx.progress(2.0, Some(2.0), None);
                Ok(ToolOutput::text("polled"))
            }
        })
        .tool(Tool::new("ask"), |ctx: Context, _args: Value| async move {
            let answer = ctx
                .elicit(json!({"message": "Which region?", "requestedSchema": {"type": "object", "properties": {"r": {"type": "string"}}}}), RequestOptions::default())
                .await?;
            Ok(ToolOutput::text(answer["content"]["r"].as_str().unwrap_or("none").to_owned()))
        })
        .build()
        .expect("valid test server")
}

/// The event store, which hears of every session that ends (deleted, reaped, shut down) as its
/// events can then go, also tells the test.
struct EndedSessions {
    events: MemoryEventStore,
    ended: mpsc::UnboundedSender<String>,
}

impl EventStore for EndedSessions {
    fn store(&self, session: &str, stream: &str, seq: u64, message: &str) {
        self.events.store(session, stream, seq, message);
    }

    fn replay(&self, session: &str, stream: &str, after: u64) -> Option<Vec<(u64, String)>> {
        self.events.replay(session, stream, after)
    }

    fn stream_ended(&self, session: &str, stream: &str) {
        self.events.stream_ended(session, stream);
    }

    fn forget_session(&self, session: &str) {
        self.events.forget_session(session);
        let _ = self.ended.send(session.to_owned());
    }
}

/// The sessions that ended, as the server ends them.
struct Ended(mpsc::UnboundedReceiver<String>);

impl Ended {
    /// Waits until the session `id` has ended (it is out of the server's table by then).
    async fn until(&mut self, id: &str) {
        let ended = async {
            while let Some(session) = self.0.recv().await {
                if session == id {
                    return;
                }
            }
            panic!("the server is gone");
        };
        tokio::time::timeout(Duration::from_secs(10), ended)
            .await
            .unwrap_or_else(|_| panic!("session {id} did not end within 10 s"));
    }
}

async fn serve(options: HttpOptions) -> HttpServer {
    let (hold, _) = gate();
    test_server(hold)
        .serve_http("127.0.0.1:0", options)
        .await
        .expect("bind 127.0.0.1:0")
}

/// A test server and the test's handles on it.
struct Served {
    http: HttpServer,
    /// The server behind it, whose tools a test may change while it serves.
    tools: Server,
    gate: Gate,
    ended: Ended,
}

/// [`serve`], with the gate of its held calls and word of the sessions that end.
async fn serve_watched(mut options: HttpOptions) -> Served {
    let (hold, gate) = gate();
    let (ended_tx, ended) = mpsc::unbounded_channel();
    options.event_store = Arc::new(EndedSessions {
        events: MemoryEventStore::default(),
        ended: ended_tx,
    });
    let tools = test_server(hold);
    let http = tools
        .serve_http("127.0.0.1:0", options)
        .await
        .expect("bind 127.0.0.1:0");
    Served {
        http,
        tools,
        gate,
        ended: Ended(ended),
    }
}

/// Options for a server that ends sessions idle for `idle`.
fn reaping_after(idle: Duration) -> HttpOptions {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Some(idle);
    options
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    async fn open(server: &HttpServer) -> Conn {
        let addr = server.local_addr();
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        Conn {
            sender,
            host: addr.to_string(),
        }
    }

    async fn send(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response<Incoming> {
        let mut request = Request::builder().method(method).uri("/mcp");
        if !headers.iter().any(|(name, _)| *name == "host") {
            request = request.header("host", self.host.as_str());
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        self.sender.ready().await.expect("connection ready");
        self.sender.send_request(request).await.expect("response")
    }

    /// A POST as a well-behaved client sends it.
    async fn post(&mut self, session: Option<&str>, body: &Value) -> Response<Incoming> {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("mcp-session-id", session));
            headers.push(("mcp-protocol-version", "2025-11-25"));
        }
        self.send(Method::POST, &headers, &body.to_string()).await
    }

    /// The status of a `ping` in `session`.
    async fn ping(&mut self, session: &str) -> StatusCode {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        self.post(Some(session), &ping).await.status()
    }

    /// A GET of the session's standalone stream, or with `last_event_id` a resumption.
    async fn get_stream(
        &mut self,
        session: &str,
        last_event_id: Option<&str>,
    ) -> Response<Incoming> {
        let mut headers = vec![("accept", "text/event-stream"), ("mcp-session-id", session)];
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id));
        }
        self.send(Method::GET, &headers, "").await
    }

    /// initialize + initialized; the session id.
    async fn open_session(&mut self, capabilities: Value) -> String {
        let reply = self
            .post(
                None,
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "http-test", "version": "1"}}}),
            )
            .await;
        assert_eq!(reply.status(), StatusCode::OK);
        let id = header(reply.headers(), "mcp-session-id").expect("a session id");
        let body = json_body(reply).await;
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        let reply = self
            .post(
                Some(&id),
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(reply.status(), StatusCode::ACCEPTED);
        id
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn json_body(reply: Response<Incoming>) -> Value {
    let bytes = reply.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
}

fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// One SSE event: its id (if any), its data, and a `retry:` seen before it.
#[derive(Debug, Default, Clone)]
struct Event {
    id: Option<String>,
    data: String,
    retry: Option<u64>,
}

/// Reads SSE events from a body as they arrive.
struct Events {
    body: Incoming,
    buffer: String,
}

impl Events {
    fn new(reply: Response<Incoming>) -> Events {
        assert_eq!(
            header(reply.headers(), "content-type").as_deref(),
            Some("text/event-stream")
        );
        Events {
            body: reply.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event, or `None` at the end of the body.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event::default();
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        event.id = Some(v.to_owned());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        event.data.push_str(v);
                        any = true;
                    } else if let Some(v) = line.strip_prefix("retry: ") {
                        event.retry = v.parse().ok();
                        any = true;
                    }
                }
                if any {
                    return Some(event);
                }
                continue; // a comment (keep-alive)
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("SSE event within 10 s")?
                .expect("body frame");
            if let Ok(data) = frame.into_data() {
                self.buffer
                    .push_str(std::str::from_utf8(&data).expect("UTF-8"));
            }
        }
    }

    /// Every remaining JSON message until the body ends.
    async fn rest(&mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(event) = self.next().await {
            if !event.data.is_empty() {
                messages.push(serde_json::from_str(&event.data).expect("JSON data"));
            }
        }
        messages
    }
}

#[tokio::test]
async fn refusals_have_the_right_status_and_the_server_keeps_serving() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let json_accept = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    // (method, headers, body, expected status, what the error message says)
    type Case<'a> = (Method, Vec<(&'a str, &'a str)>, String, StatusCode, &'a str);
    let cases: Vec<Case> = vec![
        (
            Method::POST,
            json_accept.to_vec(),
            init.clone(),
            StatusCode::NOT_ACCEPTABLE,
            "accept",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "text/plain"),
                ("accept", "application/json, text/event-stream"),
            ],
            init.clone(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Media Type",
        ),
        (
            Method::POST,
            vec![("content-type", "application/json"), ("accept", "*/*")],
            "{not json".into(),
            StatusCode::BAD_REQUEST,
            "Parse error",
        ),
        (
            Method::POST,
            vec![("content-type", "application/json"), ("accept", "*/*")],
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id header is required",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-session-id", "0123"),
            ],
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
            StatusCode::NOT_FOUND,
            "unknown or expired session",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            init.clone(),
            StatusCode::BAD_REQUEST,
            "unsupported MCP-Protocol-Version",
        ),
        (
            Method::PUT,
            vec![],
            String::new(),
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed",
        ),
        (
            Method::GET,
            vec![("accept", "text/event-stream")],
            String::new(),
            StatusCode::BAD_REQUEST,
            "required",
        ),
        (
            Method::GET,
            vec![("accept", "application/json")],
            String::new(),
            StatusCode::NOT_ACCEPTABLE,
            "accept",
        ),
        (
            Method::DELETE,
            vec![("mcp-session-id", "nope")],
            String::new(),
            StatusCode::NOT_FOUND,
            "unknown",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("origin", "http://evil.example.com"),
            ],
            init.clone(),
            StatusCode::FORBIDDEN,
            "Origin",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("host", "evil.example.com"),
            ],
            init.clone(),
            StatusCode::FORBIDDEN,
            "Host",
        ),
    ];
    for (method, headers, body, status, says) in cases {
        let reply = conn.send(method.clone(), &headers, &body).await;
        assert_eq!(reply.status(), status, "{method} {headers:?}");
        if status == StatusCode::METHOD_NOT_ALLOWED {
            assert_eq!(
                header(reply.headers(), "allow").as_deref(),
                Some("GET, POST, DELETE")
            );
        }
        let body = json_body(reply).await;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(says),
            "{status}: {message:?} lacks {says:?}"
        );
        if status == StatusCode::BAD_REQUEST && says == "Parse error" {
            assert_eq!(body["error"]["code"], -32700);
        }
    }
    // A body over the limit (the server's 4 MiB frame limit) is refused unread; the server may
    // then close that connection, so it goes on one of its own.
    let mut big = Conn::open(&server).await;
    let huge = format!("[{}1]", "1,".repeat(2_200_000));
    let reply = big
        .send(
            Method::POST,
            &[("content-type", "application/json"), ("accept", "*/*")],
            &huge,
        )
        .await;
    assert_eq!(reply.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // The same connection still serves a good client.
    let session = conn.open_session(json!({})).await;
    let reply = conn
        .post(
            Some(&session),
            &call(7, "echo", json!({"text": "still here"})),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "still here"
    );
    // Loopback names and origins pass.
    let ok = conn
        .send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("host", "localhost:1234"),
                ("origin", "http://localhost:5173"),
            ],
            &init,
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn quick_answers_are_json_and_slow_ones_stream_with_their_progress() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let quick = conn
        .post(Some(&session), &call(1, "echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        header(quick.headers(), "content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(json_body(quick).await["result"]["content"][0]["text"], "hi");

    let mut request = call(2, "steps", json!({"steps": 3, "tag": "a"}));
    request["params"]["_meta"] = json!({"progressToken": "tok"});
    let mut events = Events::new(conn.post(Some(&session), &request).await);
    let priming = events.next().await.expect("priming event");
    assert!(priming.data.is_empty() && priming.id.as_deref().is_some_and(|id| id.ends_with("-0")));
    let messages = events.rest().await;
    let progress: Vec<f64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap_or_default())
        .collect();
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .count(),
        3
    );
    let last = messages.last().expect("the answer");
    assert_eq!(last["id"], 2);
    assert_eq!(last["result"]["content"][0]["text"], "done \"a\"");
    server.shutdown().await;
}

#[tokio::test]
async fn sessions_never_see_each_others_messages() {
    let Served {
        http: server,
        tools,
        ..
    } = serve_watched(HttpOptions::default()).await;
    let mut a = Conn::open(&server).await;
    let mut b = Conn::open(&server).await;
    let session_a = a.open_session(json!({})).await;
    let session_b = b.open_session(json!({})).await;
    assert_ne!(session_a, session_b);
    // A's standalone stream is open while B's calls run and send progress and logs.
    let mut a_get = Conn::open(&server).await;
    let standalone = a_get.get_stream(&session_a, None).await;
    assert_eq!(standalone.status(), StatusCode::OK);
    let mut standalone = Events::new(standalone);
    assert!(standalone.next().await.expect("priming").data.is_empty());

    let mut request_b = call(1, "steps", json!({"steps": 2, "tag": "b"}));
    request_b["params"]["_meta"] = json!({"progressToken": 1});
    let mut request_a = call(1, "steps", json!({"steps": 2, "tag": "a"}));
    request_a["params"]["_meta"] = json!({"progressToken": 1});
    let (reply_a, reply_b) = tokio::join!(
        a.post(Some(&session_a), &request_a),
        b.post(Some(&session_b), &request_b)
    );
    let (messages_a, messages_b) =
        tokio::join!(async { Events::new(reply_a).rest().await }, async {
            Events::new(reply_b).rest().await
        });
    for message in &messages_a {
        assert!(
            !message.to_string().contains("\"b\""),
            "A saw B's message {message}"
        );
    }
    for message in &messages_b {
        assert!(
            !message.to_string().contains("\"a\""),
            "B saw A's message {message}"
        );
    }
    assert_eq!(
        messages_a.last().unwrap()["result"]["content"][0]["text"],
        "done \"a\""
    );
    assert_eq!(
        messages_b.last().unwrap()["result"]["content"][0]["text"],
        "done \"b\""
    );
    // Nothing went to A's standalone stream (its calls' messages are on their own streams):
    // the first event on it is a list change made after every call above was answered.
    let noop = |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("")) };
    tools.add_tool(Tool::new("fence"), noop).unwrap();
    let first = standalone.next().await.expect("the list change");
    assert_eq!(
        serde_json::from_str::<Value>(&first.data).ok(),
        Some(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        "unexpected standalone event {first:?}"
    );
    // A second standalone stream is a conflict; B's id does not open A's.
    let second = a.get_stream(&session_a, None).await;
    assert_eq!(second.status(), StatusCode::CONFLICT);
    server.shutdown().await;
}

#[tokio::test]
async fn a_released_stream_is_resumed_after_last_event_id() {
    let Served {
        http: server, gate, ..
    } = serve_watched(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(5, "poll", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "p"});
    let mut events = Events::new(conn.post(Some(&session), &request).await);
    let mut last_id = None;
    let mut retry = None;
    while let Some(event) = events.next().await {
        if event.retry.is_some() {
            retry = event.retry;
        }
        if event.id.is_some() {
            last_id = event.id;
        }
    }
    assert_eq!(
        retry,
        Some(1000),
        "a retry hint before the connection closed"
    );
    let last_id = last_id.expect("events had ids");
    assert!(
        last_id.ends_with("-1"),
        "progress 1 was the last event before the close: {last_id}"
    );
    // The call goes on (until the gate lets it finish); resuming gets what came after,
    // including the answer.
    let mut get = Conn::open(&server).await;
    let resumed = get.get_stream(&session, Some(&last_id)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    gate.release();
    let messages = Events::new(resumed).rest().await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["params"]["progress"], 2);
    assert_eq!(messages[1]["id"], 5);
    assert_eq!(messages[1]["result"]["content"][0]["text"], "polled");
    // Replaying the finished stream again from its start gives the whole stream.
    let first = last_id.replace("-1", "-0");
    let again = get.get_stream(&session, Some(&first)).await;
    assert_eq!(Events::new(again).rest().await.len(), 3);
    // Unknown streams are refused with 400, not 404 (the session is fine).
    let unknown = get.get_stream(&session, Some("p99-3")).await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    server.shutdown().await;
}

/// A POST on a raw connection of its own, which the test can drop mid-answer as a network
/// blip would, and then know that the server has let it go.
struct RawPost {
    stream: tokio::net::TcpStream,
    received: String,
}

impl RawPost {
    async fn send(server: &HttpServer, session: &str, body: &Value) -> RawPost {
        use tokio::io::AsyncWriteExt;
        let mut stream = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        let body = body.to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            server.local_addr(),
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .await
            .expect("write the request");
        RawPost {
            stream,
            received: String::new(),
        }
    }

    /// Reads until an SSE event whose data contains `needle` has come; that event's id.
    async fn id_of_event_with(&mut self, needle: &str) -> String {
        use tokio::io::AsyncReadExt;
        let read = async {
            let mut buf = [0u8; 4096];
            loop {
                let mut id = None;
                for line in self.received.lines() {
                    if let Some(value) = line.strip_prefix("id: ") {
                        id = Some(value.to_owned());
                    } else if line.starts_with("data: ")
                        && line.contains(needle)
                        && let Some(id) = id.take()
                    {
                        return id;
                    }
                }
                let n = self.stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "the server closed early: {:?}", self.received);
                self.received.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .unwrap_or_else(|_| panic!("no event with {needle:?} within 10 s"))
    }

    /// Closes the client's side, then waits until the server has closed its side too: it has
    /// let the connection, and the answer it was streaming there, go.
    async fn hang_up(mut self) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        self.stream.shutdown().await.expect("close our side");
        let closed = async {
            let mut buf = [0u8; 4096];
            while let Ok(1..) = self.stream.read(&mut buf).await {}
        };
        tokio::time::timeout(Duration::from_secs(10), closed)
            .await
            .expect("the server closed the connection within 10 s");
    }
}

#[tokio::test]
async fn a_stream_the_client_dropped_is_resumed_and_the_call_was_not_cancelled() {
    let Served {
        http: server, gate, ..
    } = serve_watched(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(6, "held", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "q"});
    let mut post = RawPost::send(&server, &session, &request).await;
    let last_id = post.id_of_event_with("notifications/progress").await;
    // The client drops the connection mid-call (a network blip), and the server lets it go:
    // the call goes on, and what it sends meanwhile is kept for the client.
    post.hang_up().await;
    gate.release();
    let mut again = Conn::open(&server).await;
    let resumed = again.get_stream(&session, Some(&last_id)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let messages = Events::new(resumed).rest().await;
    let answer = messages.last().expect("the answer after the replay");
    assert_eq!(answer["id"], 6);
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    let replayed_progress = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(
        replayed_progress, 1,
        "progress 2 after the last event seen: {messages:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn elicitation_travels_on_the_call_stream_and_the_answer_comes_by_post() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({"elicitation": {}})).await;
    let mut events = Events::new(conn.post(Some(&session), &call(9, "ask", json!({}))).await);
    events.next().await.expect("priming");
    let request: Value = serde_json::from_str(&events.next().await.expect("request").data).unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let mut other = Conn::open(&server).await;
    let answer = other
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"r": "eu"}}}),
        )
        .await;
    assert_eq!(answer.status(), StatusCode::ACCEPTED);
    let messages = events.rest().await;
    assert_eq!(
        messages.last().unwrap()["result"]["content"][0]["text"],
        "eu"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn stateless_mode_answers_without_sessions_and_refuses_requests_to_the_client() {
    let mut options = HttpOptions::default();
    options.stateless = true;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let reply = conn
        .send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &call(1, "echo", json!({"text": "alone"})).to_string(),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert!(header(reply.headers(), "mcp-session-id").is_none());
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "alone"
    );
    // A tool that asks the client fails at once with a clear message instead of hanging.
    let asked = tokio::time::timeout(
        Duration::from_secs(5),
        conn.send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            &call(2, "ask", json!({})).to_string(),
        ),
    )
    .await
    .expect("no hang");
    let answer = match header(asked.headers(), "content-type").as_deref() {
        Some("application/json") => json_body(asked).await,
        _ => Events::new(asked).rest().await.pop().expect("answer"),
    };
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("elicitation") || text.contains("stateless"),
        "{text}"
    );
    for (method, allow) in [(Method::GET, "POST"), (Method::DELETE, "POST")] {
        let reply = conn
            .send(method, &[("accept", "text/event-stream")], "")
            .await;
        assert_eq!(reply.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header(reply.headers(), "allow").as_deref(), Some(allow));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_stateless_call_runs_as_one_task_with_no_session_watcher() {
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.response_mode = ResponseMode::Json;
    let Served {
        http: server,
        mut gate,
        ..
    } = serve_watched(options).await;
    let mut conn = Conn::open(&server).await;
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // One exchange first, so the server's task for this connection is already counted.
    let echoed = conn
        .send(
            Method::POST,
            &headers,
            &call(1, "echo", json!({"text": "hi"})).to_string(),
        )
        .await;
    assert_eq!(
        json_body(echoed).await["result"]["content"][0]["text"],
        "hi"
    );
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let held = tokio::spawn(async move {
        let reply = conn
            .send(
                Method::POST,
                &headers,
                &call(2, "held", json!({})).to_string(),
            )
            .await;
        json_body(reply).await
    });
    // The request's own task here and the call's on the server; a session made for one
    // exchange has nothing to watch, so it starts no task of its own. The handler starts
    // within the server's handling of the request, which spawns the call's task before it
    // yields: once the handler has started, every task of this exchange is counted.
    gate.started().await;
    assert_eq!(metrics.num_alive_tasks(), before + 2);
    gate.release();
    let answer = held.await.expect("the request task");
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    server.shutdown().await;
}

#[tokio::test]
async fn json_mode_always_answers_with_one_json_body() {
    let mut options = HttpOptions::default();
    options.response_mode = ResponseMode::Json;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(3, "steps", json!({"steps": 2, "tag": "j"}));
    request["params"]["_meta"] = json!({"progressToken": 3});
    let reply = conn.post(Some(&session), &request).await;
    assert_eq!(
        header(reply.headers(), "content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "done \"j\""
    );
    server.shutdown().await;
}

fn token_check(token: &str) -> Result<TokenInfo, AuthRejection> {
    match token {
        "alice-token" => Ok(TokenInfo::new(Some("alice".into()), vec!["tools".into()])),
        "bob-token" => Ok(TokenInfo::new(Some("bob".into()), vec!["tools".into()])),
        "reader-token" => Err(AuthRejection::insufficient_scope("tools")),
        _ => Err(AuthRejection::invalid_token("unknown token")),
    }
}

#[tokio::test]
async fn bearer_tokens_are_required_checked_and_bound_to_the_session() {
    let mut options = HttpOptions::default();
    options.auth = Some(BearerAuth::new(token_check, "https://auth.example.com"));
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let base = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let missing = conn.send(Method::POST, &base, &init).await;
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let challenge = header(missing.headers(), "www-authenticate").expect("a challenge");
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.local_addr()
    );
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\"")
    );

    let with = |token: &'static str| {
        let mut headers = base.to_vec();
        headers.push(("authorization", token));
        headers
    };
    let bad = conn.send(Method::POST, &with("Bearer forged"), &init).await;
    assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
    assert!(
        header(bad.headers(), "www-authenticate")
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    let scoped = conn
        .send(Method::POST, &with("Bearer reader-token"), &init)
        .await;
    assert_eq!(scoped.status(), StatusCode::FORBIDDEN);
    assert!(
        header(scoped.headers(), "www-authenticate")
            .unwrap()
            .contains("scope=\"tools\"")
    );

    let opened = conn
        .send(Method::POST, &with("Bearer alice-token"), &init)
        .await;
    assert_eq!(opened.status(), StatusCode::OK);
    let session = header(opened.headers(), "mcp-session-id").unwrap();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let mut as_alice = with("Bearer alice-token");
    as_alice.push(("mcp-session-id", &session));
    assert_eq!(
        conn.send(Method::POST, &as_alice, &ping).await.status(),
        StatusCode::OK
    );
    // Bob's valid token does not open Alice's session.
    let mut as_bob = with("Bearer bob-token");
    as_bob.push(("mcp-session-id", &session));
    assert_eq!(
        conn.send(Method::POST, &as_bob, &ping).await.status(),
        StatusCode::NOT_FOUND
    );

    // The metadata needs no token.
    let metadata = conn.send(Method::GET, &[], "").await;
    assert_eq!(
        metadata.status(),
        StatusCode::UNAUTHORIZED,
        "the MCP path itself still needs one"
    );
    let stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let request = Request::get("/.well-known/oauth-protected-resource/mcp")
        .header("host", server.local_addr().to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let document = json_body(sender.send_request(request).await.unwrap()).await;
    assert_eq!(
        document["authorization_servers"],
        json!(["https://auth.example.com"])
    );
    assert_eq!(
        document["resource"],
        format!("http://{}/mcp", server.local_addr())
    );
    server.shutdown().await;
}

/// Sends a POST whose body goes in chunks (no Content-Length, so its size is learnt only by
/// reading it) on a connection of its own; the status line's code and the body.
async fn post_chunked(server: &HttpServer, chunks: &[&str]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n",
        server.local_addr()
    );
    for chunk in chunks {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    // The server may answer and close before taking all of an over-long body.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {reply:?}"));
    let body = reply
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

#[tokio::test]
async fn a_body_in_chunks_is_read_whole_and_refused_once_past_the_limit() {
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(400);
    let server = serve(options).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "chunked", "version": "1"}}})
    .to_string();
    let (head, rest) = init.split_at(init.len() / 3);
    let (middle, tail) = rest.split_at(rest.len() / 2);
    let (status, body) = post_chunked(&server, &[head, middle, tail]).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"protocolVersion\":\"2025-11-25\""),
        "{body}"
    );

    let filler = format!("\"{}\"", "x".repeat(150));
    let (status, body) =
        post_chunked(&server, &["[", &filler, ",", &filler, ",", &filler, "]"]).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("exceeds the limit of 400 bytes"), "{body}");

    // The server goes on serving.
    let mut conn = Conn::open(&server).await;
    conn.open_session(json!({})).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_refused_before_it_is_sent() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(400);
    let server = serve(options).await;
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    // The head only: were the server to read up to the limit first, it would wait here.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n",
        server.local_addr()
    );
    stream.write_all(head.as_bytes()).await.expect("write head");
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&reply).contains("exceeds the limit") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => reply.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(read.is_ok(), "no answer before the body came: {reply:?}");
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("exceeds the limit of 400 bytes"), "{reply}");
    server.shutdown().await;
}

/// A connection remembers the session it used last; a session deleted elsewhere or reaped
/// must be gone for that connection too. (Here nothing else holds the ended session; the
/// unit test in `endpoint.rs` covers the table's listing while something still does.)
#[tokio::test]
async fn a_session_ended_elsewhere_is_gone_for_the_connection_that_used_it_last() {
    let Served {
        http: server,
        mut ended,
        ..
    } = serve_watched(reaping_after(Duration::from_millis(200))).await;
    let mut user = Conn::open(&server).await;
    let mut other = Conn::open(&server).await;

    let deleted = user.open_session(json!({})).await;
    assert_eq!(user.ping(&deleted).await, StatusCode::OK);
    let reply = other
        .send(Method::DELETE, &[("mcp-session-id", &deleted)], "")
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(user.ping(&deleted).await, StatusCode::NOT_FOUND, "deleted");

    let reaped = user.open_session(json!({})).await;
    assert_eq!(user.ping(&reaped).await, StatusCode::OK);
    // Left alone, it is ended once idle for 200 ms.
    ended.until(&reaped).await;
    assert_eq!(user.ping(&reaped).await, StatusCode::NOT_FOUND, "reaped");

    // A session used on two connections stays one session for both.
    let shared = user.open_session(json!({})).await;
    assert_eq!(other.ping(&shared).await, StatusCode::OK);
    assert_eq!(user.ping(&shared).await, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn past_the_session_limit_new_sessions_get_503_and_deleting_one_frees_a_place() {
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let first = conn.open_session(json!({})).await;
    conn.open_session(json!({})).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let refused = conn.post(None, &init).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(header(refused.headers(), "mcp-session-id").is_none());
    let deleted = conn
        .send(Method::DELETE, &[("mcp-session-id", &first)], "")
        .await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(conn.post(None, &init).await.status(), StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn idle_sessions_are_reaped_but_not_while_a_call_runs() {
    let Served {
        http: server,
        gate,
        mut ended,
        ..
    } = serve_watched(reaping_after(Duration::from_millis(200))).await;
    let mut long = Conn::open(&server).await;
    let busy = long.open_session(json!({})).await;
    let mut request = call(1, "held", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "b"});
    let mut answers = Events::new(long.post(Some(&busy), &request).await);
    answers.next().await.expect("priming");
    // The call's first progress is out: the call runs, and the busy session's requests have
    // all touched it by now.
    answers.next().await.expect("the first progress");
    // Opened after all that, so by the time this session has been idle long enough to be
    // ended, the busy one has gone as long without a request: only its call keeps it.
    let mut conn = Conn::open(&server).await;
    let idle = conn.open_session(json!({})).await;
    ended.until(&idle).await;
    let gone = conn
        .post(
            Some(&idle),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        )
        .await;
    assert_eq!(
        gone.status(),
        StatusCode::NOT_FOUND,
        "the idle session was ended"
    );
    gate.release();
    let answer = answers.rest().await.pop().expect("answer");
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    let alive = long
        .post(
            Some(&busy),
            &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .await;
    assert_eq!(
        alive.status(),
        StatusCode::OK,
        "the busy session lived through the call"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_sessions_lose_nothing() {
    const SESSIONS: usize = 1000;
    const CONNECTIONS: usize = 50;
    let server = Arc::new(serve(HttpOptions::default()).await);
    let answered = Arc::new(AtomicUsize::new(0));
    // Every session is opened first, so all 1,000 are live at once; then each makes calls.
    let mut tasks = Vec::new();
    for c in 0..CONNECTIONS {
        let server = server.clone();
        let answered = answered.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(&server).await;
            let mut sessions = Vec::new();
            for _ in 0..SESSIONS / CONNECTIONS {
                sessions.push(conn.open_session(json!({})).await);
            }
            for round in 0..3 {
                for (s, session) in sessions.iter().enumerate() {
                    let text = format!("conn {c} session {s} round {round}");
                    let reply = conn
                        .post(Some(session), &call(round, "echo", json!({"text": text})))
                        .await;
                    assert_eq!(reply.status(), StatusCode::OK);
                    let body = json_body(reply).await;
                    assert_eq!(body["id"], round);
                    assert_eq!(body["result"]["content"][0]["text"], text);
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a client task failed");
    }
    assert_eq!(answered.load(Ordering::Relaxed), SESSIONS * 3);
    match Arc::try_unwrap(server) {
        Ok(server) => server.shutdown().await,
        Err(_) => panic!("server handle still shared"),
    }
}
