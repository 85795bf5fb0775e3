//! What every HTTP test uses: a test server with tools the test can hold, a raw hyper
//! client connection, and an SSE reader.

use std::sync::Arc;
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
    AuthRejection, EventStore, HttpOptions, HttpServer, MemoryEventStore, TokenInfo,
};
use toolwire::{Context, RequestOptions, Server, ServerOptions, Tool, ToolOutput};

/// The test's side of the `held` and `poll` tools: their calls say when they have started,
/// then wait until the test releases them.
pub(crate) struct Gate {
    pub(crate) started: mpsc::UnboundedReceiver<()>,
    pub(crate) release: Arc<Semaphore>,
}

/// The tools' side of a [`Gate`].
#[derive(Clone)]
pub(crate) struct Hold {
    pub(crate) started: mpsc::UnboundedSender<()>,
    pub(crate) release: Arc<Semaphore>,
}

pub(crate) fn gate() -> (Hold, Gate) {
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
    pub(crate) async fn wait(&self) {
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
    pub(crate) async fn started(&mut self) {
        tokio::time::timeout(Duration::from_secs(10), self.started.recv())
            .await
            .expect("a held call started within 10 s")
            .expect("the tools are alive");
    }

    /// Lets one held call go on.
    pub(crate) fn release(&self) {
        self.release.add_permits(1);
    }
}

/// The tools. `steps` takes its time (its sleeps are its workload); `held` and `poll` run until
/// the test's [`Gate`] lets them go on.
pub(crate) fn test_server(hold: Hold) -> Server {
    test_server_with(hold, ServerOptions::default())
}

/// [`test_server`] with engine options of the test's.
pub(crate) fn test_server_with(hold: Hold, options: ServerOptions) -> Server {
    test_builder(hold, options)
        .build()
        .expect("valid test server")
}

/// The builder of [`test_server_with`], for a test to add to.
pub(crate) fn test_builder(hold: Hold, options: ServerOptions) -> toolwire::ServerBuilder {
    Server::builder("http-test", "1")
        .options(options)
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
}

/// The event store, which hears of every session that ends (deleted, reaped, shut down) as its
/// events can then go, also tells the test.
pub(crate) struct EndedSessions {
    pub(crate) events: MemoryEventStore,
    pub(crate) ended: mpsc::UnboundedSender<String>,
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
pub(crate) struct Ended(mpsc::UnboundedReceiver<String>);

impl Ended {
    /// Waits until the session `id` has ended (it is out of the server's table by then).
    pub(crate) async fn until(&mut self, id: &str) {
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

/// A token check for tests: "<subject>-token" is a token of that subject, anything else is
/// refused.
pub(crate) fn subjects(token: &str) -> Result<TokenInfo, AuthRejection> {
    match token.strip_suffix("-token") {
        Some(subject) => Ok(TokenInfo::new(Some(subject.into()), Vec::new())),
        None => Err(AuthRejection::invalid_token("unknown token")),
    }
}

pub(crate) async fn serve(options: HttpOptions) -> HttpServer {
    let (hold, _) = gate();
    test_server(hold)
        .serve_http("127.0.0.1:0", options)
        .await
        .expect("bind 127.0.0.1:0")
}

/// A test server and the test's handles on it.
pub(crate) struct Served {
    pub(crate) http: HttpServer,
    /// The server behind it, whose tools a test may change while it serves.
    pub(crate) tools: Server,
    pub(crate) gate: Gate,
    pub(crate) ended: Ended,
}

/// [`serve`], with the gate of its held calls and word of the sessions that end.
pub(crate) async fn serve_watched(mut options: HttpOptions) -> Served {
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
pub(crate) fn reaping_after(idle: Duration) -> HttpOptions {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Some(idle);
    options
}

/// One keep-alive HTTP/1.1 connection.
pub(crate) struct Conn {
    pub(crate) sender: SendRequest<Full<Bytes>>,
    pub(crate) host: String,
    /// Sent as `Authorization: Bearer …` on every request, when set.
    pub(crate) token: Option<String>,
}

impl Conn {
    pub(crate) async fn open(server: &HttpServer) -> Conn {
        let stream = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        Conn::over(server, stream).await
    }

    /// A connection from the local address `from` (another loopback address, say).
    pub(crate) async fn open_from(server: &HttpServer, from: std::net::IpAddr) -> Conn {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(std::net::SocketAddr::new(from, 0))
            .expect("bind the client's address");
        let stream = socket.connect(server.local_addr()).await.expect("connect");
        Conn::over(server, stream).await
    }

    /// A connection sending `token` with every request.
    pub(crate) async fn open_with_token(server: &HttpServer, token: &str) -> Conn {
        let mut conn = Conn::open(server).await;
        conn.token = Some(format!("Bearer {token}"));
        conn
    }

    /// A connection whose receive window is a few KiB: a body it does not read soon backs up
    /// to the server instead of into the kernel's buffers.
    pub(crate) async fn open_narrow(server: &HttpServer) -> Conn {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("receive buffer");
        let stream = socket.connect(server.local_addr()).await.expect("connect");
        Conn::over(server, stream).await
    }

    async fn over(server: &HttpServer, stream: tokio::net::TcpStream) -> Conn {
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        Conn {
            sender,
            host: server.local_addr().to_string(),
            token: None,
        }
    }

    pub(crate) async fn send(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response<Incoming> {
        self.send_to("/mcp", method, headers, body).await
    }

    /// [`send`](Self::send) to another path.
    pub(crate) async fn send_to(
        &mut self,
        path: &str,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response<Incoming> {
        let mut request = Request::builder().method(method).uri(path);
        if !headers.iter().any(|(name, _)| *name == "host") {
            request = request.header("host", self.host.as_str());
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", token.as_str());
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        self.sender.ready().await.expect("connection ready");
        self.sender.send_request(request).await.expect("response")
    }

    /// A POST as a well-behaved client sends it.
    pub(crate) async fn post(&mut self, session: Option<&str>, body: &Value) -> Response<Incoming> {
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
    pub(crate) async fn ping(&mut self, session: &str) -> StatusCode {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        self.post(Some(session), &ping).await.status()
    }

    /// A GET of the session's standalone stream, or with `last_event_id` a resumption.
    pub(crate) async fn get_stream(
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
    pub(crate) async fn open_session(&mut self, capabilities: Value) -> String {
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

pub(crate) fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(crate) async fn json_body(reply: Response<Incoming>) -> Value {
    let bytes = reply.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
}

pub(crate) fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// One SSE event: its id (if any), its data, and a `retry:` seen before it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) data: String,
    pub(crate) retry: Option<u64>,
}

/// Reads SSE events from a body as they arrive.
pub(crate) struct Events {
    pub(crate) body: Incoming,
    pub(crate) buffer: String,
}

impl Events {
    pub(crate) fn new(reply: Response<Incoming>) -> Events {
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
    pub(crate) async fn next(&mut self) -> Option<Event> {
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
    pub(crate) async fn rest(&mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(event) = self.next().await {
            if !event.data.is_empty() {
                messages.push(serde_json::from_str(&event.data).expect("JSON data"));
            }
        }
        messages
    }
}
