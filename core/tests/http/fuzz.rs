//! Seeded, stateful fuzzing of the HTTP request path against a live server, over raw sockets:
//! request lines, headers (Host, Origin, Accept, Content-Type, session ids, protocol versions,
//! `Last-Event-ID`), body framing (Content-Length and chunked, right and wrong) and bodies.
//! Session and event ids the server hands out are kept and fed back, mutated or not, so the
//! requests reach past the first checks. Every request must get a well-formed answer (or a
//! closed connection), never a 500 or a hang, and a well-behaved client must stay served.
//!
//! Bounded for CI; `TOOLWIRE_HTTP_FUZZ_ITERATIONS=N` (and `TOOLWIRE_HTTP_FUZZ_SEED=S`) for
//! longer runs.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwire::transport::http::{HttpOptions, HttpServer};
use toolwire::{Context, Server, Tool, ToolOutput};

use super::rng::Rng;
use super::support::{Conn, call, header, json_body};

const BODIES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{"steps":2},"_meta":{"progressToken":"p"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"tw1.6563686f"}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
    r#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#,
    r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}"#,
    "",
    "{",
    "null",
];

const BODY_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "null",
    "1e999",
    "\\u0000",
    "\\ud800",
    "\u{ff}",
    "\"id\":null",
    "\"method\":5",
    "\"params\":[]",
    "99999999999999999999999",
];

fn mutate_body(rng: &mut Rng, seed: &str) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    if rng.chance(50) {
        return bytes;
    }
    for _ in 0..=rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(3) {
            0 if !bytes.is_empty() => {
                let end = (at + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let token = rng.pick(BODY_TOKENS);
                bytes.splice(at..at, token.bytes());
            }
            _ if at < bytes.len() => bytes[at] = rng.next() as u8,
            _ => {}
        }
    }
    bytes
}

/// What the fuzzer learned from the server's answers: ids worth sending back.
#[derive(Default)]
struct Learned {
    sessions: Vec<String>,
    event_ids: Vec<String>,
}

impl Learned {
    fn keep(list: &mut Vec<String>, value: String) {
        // Bounded: the newest few are the useful ones.
        if list.len() >= 32 {
            list.remove(0);
        }
        list.push(value);
    }
}

fn session_id(rng: &mut Rng, learned: &Learned) -> String {
    if !learned.sessions.is_empty() && rng.chance(70) {
        let live = learned.sessions[rng.below(learned.sessions.len())].clone();
        return match rng.below(4) {
            0 => live[..live.len() / 2].to_owned(),
            1 => format!("{live}{live}"),
            _ => live,
        };
    }
    rng.pick(&[
        "",
        "x",
        "00000000000000000000000000000000",
        "é",
        "a b",
        &"f".repeat(600),
    ])
    .to_owned()
}

fn event_id(rng: &mut Rng, learned: &Learned) -> String {
    if !learned.event_ids.is_empty() && rng.chance(60) {
        let seen = learned.event_ids[rng.below(learned.event_ids.len())].clone();
        return match rng.below(4) {
            0 => format!("{seen}9999999999999999999999"),
            1 => seen.replace('-', ""),
            _ => seen,
        };
    }
    rng.pick(&[
        "",
        "g-0",
        "p1-1",
        "g-18446744073709551615",
        "p99999-1",
        "-",
        "g--1",
        "zz-1",
        "g-1-1",
    ])
    .to_owned()
}

/// How a request's body is framed.
enum Framing {
    None,
    Length,
    /// Chunked; with `broken`, one chunk's size lies or the last chunk is missing.
    Chunked {
        broken: bool,
    },
    /// A Content-Length that lies, or two of them.
    LyingLength,
}

/// One request: well formed as a client sends it, then given a few faults.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    framing: Framing,
    cut_at: Option<usize>,
}

impl Request {
    fn set(&mut self, name: &str, value: String) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value));
    }

    fn bytes(&self, rng: &mut Rng) -> Vec<u8> {
        let mut headers = self.headers.clone();
        let mut body = Vec::new();
        match self.framing {
            Framing::None => {}
            Framing::Length => {
                headers.push(("Content-Length".into(), self.body.len().to_string()));
                body = self.body.clone();
            }
            Framing::LyingLength => {
                let declared = match rng.below(4) {
                    0 => "-1".to_owned(),
                    1 => (self.body.len() + 10).to_string(),
                    2 => format!("{}, {}", self.body.len(), self.body.len() + 1),
                    _ => "99999999999999999999".to_owned(),
                };
                headers.push(("Content-Length".into(), declared));
                body = self.body.clone();
            }
            Framing::Chunked { broken } => {
                headers.push(("Transfer-Encoding".into(), "chunked".into()));
                let split = rng.below(self.body.len() + 1);
                for part in [&self.body[..split], &self.body[split..]] {
                    if !part.is_empty() {
                        let size = if broken && rng.chance(50) {
                            part.len() + 3
                        } else {
                            part.len()
                        };
                        body.extend_from_slice(format!("{size:x}\r\n").as_bytes());
                        body.extend_from_slice(part);
                        body.extend_from_slice(b"\r\n");
                    }
                }
                if !broken || rng.chance(50) {
                    body.extend_from_slice(b"0\r\n\r\n");
                }
            }
        }
        let mut bytes = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        for (name, value) in headers {
            bytes.extend_from_slice(name.as_bytes());
            bytes.extend_from_slice(b": ");
            bytes.extend_from_slice(value.as_bytes());
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(&body);
        if let Some(at) = self.cut_at {
            bytes.truncate(at % (bytes.len() + 1));
        }
        bytes
    }
}

/// A request a client would send (to a learned session when there is one), then up to four
/// faults, one kind at a time. With `true` when the server could wait for bytes that never
/// come (cut short, or a body framed to be longer than it is): the client then hangs up its
/// sending side.
fn request(rng: &mut Rng, learned: &Learned, authority: &str) -> (Vec<u8>, bool) {
    let seed = rng_body(rng);
    let initialize = seed.contains("\"initialize\"");
    let mut request = Request {
        method: "POST".into(),
        target: "/mcp".into(),
        headers: vec![
            ("Host".into(), authority.to_owned()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: seed.as_bytes().to_vec(),
        framing: Framing::Length,
        cut_at: None,
    };
    if !initialize && !seed.contains("2026-07-28") && !learned.sessions.is_empty() {
        let live = learned.sessions[rng.below(learned.sessions.len())].clone();
        request.set("Mcp-Session-Id", live);
        request.set("Mcp-Protocol-Version", "2025-11-25".into());
    }
    if rng.chance(15) {
        // The standalone stream or a resumption of a learned session.
        request.method = "GET".into();
        request.framing = Framing::None;
        request.set("Accept", "text/event-stream".into());
        if rng.chance(50) {
            request.set("Last-Event-ID", event_id(rng, learned));
        }
    }
    for _ in 0..rng.below(5) {
        match rng.below(16) {
            0 => {
                let method =
                    rng.pick(&["GET", "DELETE", "PUT", "OPTIONS", "HEAD", "P\0ST", "post"]);
                request.method = method.into();
            }
            1 => {
                let absolute = format!("http://{authority}/mcp");
                let target = rng.pick(&[
                    "/mcp?x=1",
                    "/",
                    "//mcp",
                    "/mcp/../mcp",
                    "/%6dcp",
                    "*",
                    "/.well-known/oauth-protected-resource/mcp",
                    &absolute,
                    "http://evil.example/mcp",
                    "http://user@evil.example/mcp",
                ]);
                request.target = target.into();
            }
            2 => {
                let host = rng.pick(&["evil.example", "", "localhost:1", "127.0.0.1:1", "[::1]"]);
                request.set("Host", host.into());
            }
            3 => request.headers.push(("Host".into(), "evil.example".into())),
            4 => {
                let accept = rng.pick(&[
                    "application/json",
                    "text/event-stream",
                    "*/*",
                    "",
                    "application/json;q=0, text/event-stream",
                ]);
                request.set("Accept", accept.into());
            }
            5 => {
                let content_type = rng.pick(&[
                    "text/plain",
                    "application/json; charset=utf-8",
                    "application/jsonx",
                    "",
                ]);
                request.set("Content-Type", content_type.into());
            }
            6 => request.set("Mcp-Session-Id", session_id(rng, learned)),
            7 => {
                let version = rng.pick(&[
                    "2025-06-18",
                    "2025-03-26",
                    "2026-07-28",
                    "1999-01-01",
                    "",
                    "2025-11-25, 2025-03-26",
                ]);
                request.set("Mcp-Protocol-Version", version.into());
            }
            8 => request.set("Last-Event-ID", event_id(rng, learned)),
            9 => {
                let origin =
                    rng.pick(&["http://localhost:3000", "https://evil.example", "null", ""]);
                request.set("Origin", origin.into());
            }
            10 => request.body = mutate_body(rng, seed),
            11 => {
                request.framing = match rng.below(4) {
                    0 => Framing::None,
                    1 => Framing::LyingLength,
                    2 => Framing::Chunked { broken: false },
                    _ => Framing::Chunked { broken: true },
                }
            }
            12 => request
                .headers
                .push(("Transfer-Encoding".into(), "chunked".into())),
            13 => request.cut_at = Some(rng.below(4096)),
            14 => request.set("X-Long", "a".repeat(rng.below(20_000))),
            _ => {
                let header = rng.pick(&[
                    "Mcp-Method",
                    "Mcp-Name",
                    "Authorization",
                    "Expect",
                    "Connection",
                ]);
                let value = rng.pick(&[
                    "tools/call",
                    "echo",
                    "Bearer x",
                    "100-continue",
                    "close",
                    "keep-alive, upgrade",
                ]);
                request.set(header, value.into());
            }
        }
    }
    let duplicate_encoding = request
        .headers
        .iter()
        .any(|(n, _)| n == "Transfer-Encoding");
    let incomplete = request.cut_at.is_some()
        || duplicate_encoding
        || matches!(
            request.framing,
            Framing::LyingLength | Framing::Chunked { broken: true }
        );
    (request.bytes(rng), incomplete)
}

fn rng_body(rng: &mut Rng) -> &'static str {
    BODIES[rng.below(BODIES.len())]
}

/// The answer's status and headers (lower-cased names), and its body as far as it was read.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `bytes` (then, with `hang_up`, closes the sending side) and reads one answer as a
/// client does: to its Content-Length, to its last chunk, or until the server closes; of an
/// event stream that may never end (a GET), only the head. `None`: the server closed without
/// answering.
async fn exchange(server: &HttpServer, bytes: &[u8], hang_up: bool) -> Option<Answer> {
    let mut stream = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    // The server may close before reading everything (a refusal); that is an answer too.
    let _ = stream.write_all(bytes).await;
    if hang_up {
        let _ = stream.shutdown().await;
    }
    let get = bytes.starts_with(b"GET ");
    // The answer to HEAD has a head only, whatever its Content-Length says.
    let head_only = bytes.starts_with(b"HEAD ");
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&buf[..n]),
        }
        skip_interim(&mut received);
        if let Some(answer) = parse(&received)
            && (head_only || answer_complete(&answer, get))
        {
            return Some(answer);
        }
    }
    skip_interim(&mut received);
    if received.is_empty() {
        return None;
    }
    let answer = parse(&received).unwrap_or_else(|| {
        panic!(
            "a head with no end: {:?}",
            String::from_utf8_lossy(&received)
        )
    });
    Some(answer)
}

/// Drops an interim `100 Continue` (to `Expect: 100-continue`) that comes before the answer.
fn skip_interim(received: &mut Vec<u8>) {
    while received.starts_with(b"HTTP/1.1 100") {
        match find(received, b"\r\n\r\n") {
            Some(end) => received.drain(..end + 4),
            None => return,
        };
    }
}

fn answer_complete(answer: &Answer, get: bool) -> bool {
    if let Some(length) = answer.header("content-length") {
        return length
            .parse::<usize>()
            .is_ok_and(|n| answer.body.len() >= n);
    }
    if answer
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"))
        && get
    {
        return true;
    }
    answer
        .header("transfer-encoding")
        .is_some_and(|t| t.contains("chunked"))
        && answer.body.ends_with(b"0\r\n\r\n")
}

/// The answer's head and the body so far, once the head is complete.
fn parse(received: &[u8]) -> Option<Answer> {
    let end = find(received, b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&received[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(Answer {
        status,
        headers,
        body: received[end + 4..].to_vec(),
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn learn(answer: &Answer, learned: &mut Learned) {
    if let Some(id) = answer.header("mcp-session-id") {
        Learned::keep(&mut learned.sessions, id.to_owned());
    }
    for line in String::from_utf8_lossy(&answer.body).lines() {
        if let Some(id) = line.strip_prefix("id: ") {
            Learned::keep(&mut learned.event_ids, id.to_owned());
        }
    }
}

/// Every answer is well formed: no server error but the documented 503, a JSON body that is
/// JSON.
fn check(answer: &Answer, request: &[u8]) {
    let request = String::from_utf8_lossy(&request[..request.len().min(600)]);
    assert!(
        (200..600).contains(&answer.status) && answer.status != 500,
        "status {} for {request:?}",
        answer.status
    );
    let json = answer
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json"));
    let length = answer
        .header("content-length")
        .and_then(|l| l.parse::<usize>().ok());
    if json && length == Some(answer.body.len()) && !answer.body.is_empty() {
        let parsed: Result<Value, _> = serde_json::from_slice(&answer.body);
        assert!(
            parsed.is_ok(),
            "a JSON answer that is not JSON for {request:?}"
        );
    }
}

fn fuzz_server() -> Server {
    Server::builder("http-fuzz", "1")
        .tool(Tool::new("echo"), |_ctx: Context, args: Value| async move {
            Ok(ToolOutput::text(
                args["text"].as_str().unwrap_or_default().to_owned(),
            ))
        })
        .tool(Tool::new("steps"), |ctx: Context, args: Value| async move {
            let steps = args["steps"].as_u64().unwrap_or(1).min(5);
            for step in 1..=steps {
                ctx.progress(step as f64, Some(steps as f64), None);
                ctx.log(toolwire::LogLevel::Info, json!({"step": step}));
            }
            Ok(ToolOutput::text("done"))
        })
        .build()
        .expect("server")
}

/// A well-behaved client: a session, a call, its answer.
async fn still_serving(server: &HttpServer) {
    let mut conn = Conn::open(server).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "still-serving", "version": "1"}}});
    // The table (64) may be full of sessions whose streams the fuzzer hung up on: they are in
    // use until a keep-alive comment finds the connection gone (the server's sse_keep_alive).
    // The 503 then says Retry-After, and a client that honours it gets in.
    let session = 'admitted: {
        for attempt in 1.. {
            let probe = conn.post(None, &initialize).await;
            if probe.status() == hyper::StatusCode::OK {
                let id = header(probe.headers(), "mcp-session-id").expect("a session id");
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                let reply = conn.post(Some(&id), &initialized).await;
                assert_eq!(reply.status(), hyper::StatusCode::ACCEPTED);
                break 'admitted id;
            }
            let status = probe.status();
            let retry_after = header(probe.headers(), "retry-after");
            let body = json_body(probe).await;
            match retry_after.and_then(|s| s.parse::<u64>().ok()) {
                Some(seconds)
                    if status == hyper::StatusCode::SERVICE_UNAVAILABLE && attempt < 10 =>
                {
                    tokio::time::sleep(Duration::from_secs(seconds)).await;
                }
                _ => panic!("a new session was refused (attempt {attempt}): {status} {body}"),
            }
        }
        unreachable!("the loop ends by admission or a panic")
    };
    let reply = conn
        .post(Some(&session), &call(1, "echo", json!({"text": "alive"})))
        .await;
    assert_eq!(reply.status(), hyper::StatusCode::OK);
    let body = json_body(reply).await;
    assert_eq!(body["result"]["content"][0]["text"], "alive", "{body}");
}

/// The server runs on threads of this name, so a panic there is told from the test's own.
const SERVER_THREADS: &str = "http-fuzz-server";

/// Panics on the server's threads. Hyper ends the connection of a request whose handling
/// panicked, which looks like any refusal that closes the connection; this tells them apart.
static SERVER_PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_server_panics() {
    static HOOKED: OnceLock<()> = OnceLock::new();
    HOOKED.get_or_init(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(SERVER_THREADS) {
                SERVER_PANICS.fetch_add(1, Ordering::SeqCst);
            }
            report(info);
        }));
    });
}

/// The server's runtime, shut down without waiting when the test ends, by an assertion too
/// (dropping a runtime inside the test's own would panic again and abort the run).
struct ServerRuntime(Option<tokio::runtime::Runtime>);

impl Drop for ServerRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_path_answers_every_mutation_and_keeps_serving() {
    let iterations = setting("TOOLWIRE_HTTP_FUZZ_ITERATIONS", 5_000);
    let seed = setting("TOOLWIRE_HTTP_FUZZ_SEED", 0x5EED_0003);
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(4096);
    options.max_sessions = 64;
    // A stream the fuzzer hung up on is found gone at the next keep-alive comment.
    options.sse_keep_alive = Some(Duration::from_secs(1));
    // A body that never completes is cut off soon, not after the default 30 s.
    options.body_read_timeout = Some(Duration::from_secs(2));
    count_server_panics();
    let runtime = ServerRuntime(Some(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(SERVER_THREADS)
            .enable_all()
            .build()
            .expect("the server's runtime"),
    ));
    let server = runtime
        .0
        .as_ref()
        .expect("the runtime runs")
        .spawn(async move { fuzz_server().serve_http("127.0.0.1:0", options).await })
        .await
        .expect("serve_http ran")
        .expect("bind 127.0.0.1:0");
    let authority = server.local_addr().to_string();
    let mut rng = Rng(seed);
    let mut learned = Learned::default();
    let mut statuses = std::collections::BTreeMap::<u16, u64>::new();
    let mut closed_without_answer = 0u64;
    for i in 0..iterations {
        let (bytes, hang_up) = request(&mut rng, &learned, &authority);
        let answer =
            tokio::time::timeout(Duration::from_secs(20), exchange(&server, &bytes, hang_up))
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no answer within 20 s (seed {seed:#x}, request {i}): {:?}",
                        String::from_utf8_lossy(&bytes)
                    )
                });
        assert_eq!(
            SERVER_PANICS.load(Ordering::SeqCst),
            0,
            "the server panicked (seed {seed:#x}, request {i}): {:?}",
            String::from_utf8_lossy(&bytes)
        );
        match answer {
            Some(answer) => {
                check(&answer, &bytes);
                learn(&answer, &mut learned);
                *statuses.entry(answer.status).or_default() += 1;
            }
            None => closed_without_answer += 1,
        }
        if i % 250 == 249 {
            still_serving(&server).await;
        }
    }
    still_serving(&server).await;
    eprintln!(
        "HTTP fuzz: {iterations} requests (seed {seed:#x}): statuses {statuses:?}, \
         {closed_without_answer} closed without an answer, {} session ids and {} event ids learned",
        learned.sessions.len(),
        learned.event_ids.len()
    );
    // The corpus reaches past the first checks: sessions were opened and answers streamed.
    assert!(
        statuses.get(&200).copied().unwrap_or(0) > iterations / 50,
        "{statuses:?}"
    );
    assert!(!learned.sessions.is_empty(), "no session was ever opened");
    server.shutdown().await;
    drop(runtime);
}
