//! The Streamable HTTP scenarios: N clients, each its own session on its own keep-alive
//! connection (TCP_NODELAY), against a server spawned with a free port put in place of
//! `{port}` in its command. Every answer is verified (status, id, text).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use hyper::StatusCode;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::Plan;
use crate::conn::ANSWER_TIMEOUT;
use crate::proc_stats;
use crate::scenarios::{check_call_text, latency_summary, round};

/// One client: a keep-alive connection and, if the server keeps sessions, the session id.
///
/// A minimal HTTP/1.1 client (requests written whole, responses read by `Content-Length` or
/// chunked coding): the load generator's own CPU per call stays small, so the servers, not
/// the client, are what is measured.
pub(crate) struct Client {
    stream: tokio::net::TcpStream,
    port: u16,
    /// The local address the connection is bound to (`None`: the OS's choice).
    local: Option<std::net::IpAddr>,
    authority: String,
    /// When the connection last carried an exchange (see [`IDLE_BEFORE_REOPEN`]).
    last_used: Instant,
    /// Set when the server closed the connection before any byte of an answer.
    closed_before_answer: bool,
    /// Idle connections reopened, counted across all clients and reported.
    reopened: Rc<Cell<u64>>,
    session: Option<String>,
    /// 2026-07-28: requests carry `_meta` and the method and name headers; no session.
    modern: bool,
    /// The `_meta` of modern requests (the tasks soak also declares the tasks extension).
    meta: &'static str,
    /// The `Mcp-Method` and `Mcp-Name` of the request being sent (modern).
    method_header: String,
    name_header: Option<String>,
    next_id: u64,
    buffer: Vec<u8>,
    request: Vec<u8>,
}

/// What one response said.
struct Response {
    status: u16,
    session: Option<String>,
    sse: bool,
    body: Vec<u8>,
}

/// A keep-alive connection left idle this long may have been closed by the server (uvicorn's
/// default is 5 s, and clients 1..N wait through the warm-up and the one-client phase); as
/// HTTP clients do, a request that finds it closed before any answer is sent again on a new
/// connection. A busy connection closed by the server is still an error.
const IDLE_BEFORE_REOPEN: Duration = Duration::from_secs(1);

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Client {
    pub(crate) async fn connect(
        port: u16,
        local: Option<std::net::IpAddr>,
    ) -> Result<tokio::net::TcpStream, String> {
        let server = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let stream = match local {
            None => tokio::net::TcpStream::connect(server).await,
            Some(ip) => {
                let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
                socket
                    .bind((ip, 0).into())
                    .map_err(|e| format!("bind to {ip}: {e}"))?;
                socket.connect(server).await
            }
        }
        .map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(stream)
    }

    pub(crate) async fn open(
        port: u16,
        reopened: Rc<Cell<u64>>,
        modern: bool,
    ) -> Result<Client, String> {
        Self::open_from(port, reopened, modern, None).await
    }

    /// [`open`](Self::open) from the local address `local` (a loopback address other than
    /// 127.0.0.1 looks like another client to a server that counts sessions per address).
    pub(crate) async fn open_from(
        port: u16,
        reopened: Rc<Cell<u64>>,
        modern: bool,
        local: Option<std::net::IpAddr>,
    ) -> Result<Client, String> {
        Ok(Client {
            stream: Self::connect(port, local).await?,
            port,
            local,
            authority: format!("127.0.0.1:{port}"),
            last_used: Instant::now(),
            closed_before_answer: false,
            reopened,
            session: None,
            modern,
            meta: MODERN_META,
            method_header: String::new(),
            name_header: None,
            next_id: 1,
            buffer: Vec::with_capacity(16 * 1024),
            request: Vec::with_capacity(1024),
        })
    }

    /// Reads more bytes into the buffer; fails at end of stream.
    async fn fill(&mut self) -> Result<(), String> {
        use tokio::io::AsyncReadExt;
        self.buffer.reserve(8192);
        let read = self
            .stream
            .read_buf(&mut self.buffer)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if read == 0 {
            return Err("the server closed the connection".into());
        }
        Ok(())
    }

    async fn exchange(&mut self, verb: &str, body: &str) -> Result<Response, String> {
        let idle = self.last_used.elapsed() >= IDLE_BEFORE_REOPEN;
        self.closed_before_answer = false;
        let mut outcome = self.exchange_once(verb, body).await;
        if outcome.is_err() && self.closed_before_answer && idle {
            self.stream = Self::connect(self.port, self.local).await?;
            self.buffer.clear();
            self.reopened.set(self.reopened.get() + 1);
            outcome = self.exchange_once(verb, body).await;
        }
        self.last_used = Instant::now();
        outcome
    }

    async fn exchange_once(&mut self, verb: &str, body: &str) -> Result<Response, String> {
        use std::io::Write;
        use tokio::io::AsyncWriteExt;
        self.request.clear();
        let _ = write!(
            self.request,
            "{verb} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.authority,
            body.len()
        );
        if let Some(session) = &self.session {
            let _ = write!(
                self.request,
                "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n"
            );
        }
        if self.modern {
            let _ = write!(
                self.request,
                "Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {}\r\n",
                self.method_header
            );
            if let Some(name) = &self.name_header {
                let _ = write!(self.request, "Mcp-Name: {name}\r\n");
            }
        }
        self.request.extend_from_slice(b"\r\n");
        self.request.extend_from_slice(body.as_bytes());
        if let Err(err) = self.stream.write_all(&self.request).await {
            self.closed_before_answer = true;
            return Err(format!("write: {err}"));
        }
        // The head.
        let head_end = loop {
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                break end;
            }
            if let Err(err) = self.fill().await {
                self.closed_before_answer = self.buffer.is_empty();
                return Err(err);
            }
        };
        let head = std::str::from_utf8(&self.buffer[..head_end]).map_err(|e| e.to_string())?;
        let mut lines = head.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line in {head:?}"))?;
        let (mut length, mut chunked, mut sse, mut session) = (None, false, false, None);
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("content-type") {
                sse = value.starts_with("text/event-stream");
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.to_owned());
            }
        }
        self.buffer.drain(..head_end + 4);
        // The body.
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let line_end = loop {
                    if let Some(end) = find(&self.buffer, b"\r\n") {
                        break end;
                    }
                    self.fill().await?;
                };
                let size_text =
                    std::str::from_utf8(&self.buffer[..line_end]).map_err(|e| e.to_string())?;
                let size =
                    usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|e| format!("bad chunk size {size_text:?}: {e}"))?;
                while self.buffer.len() < line_end + 2 + size + 2 {
                    self.fill().await?;
                }
                body.extend_from_slice(&self.buffer[line_end + 2..line_end + 2 + size]);
                self.buffer.drain(..line_end + 2 + size + 2);
                if size == 0 {
                    break body;
                }
            }
        } else {
            let length = length.unwrap_or(0);
            while self.buffer.len() < length {
                self.fill().await?;
            }
            self.buffer.drain(..length).collect()
        };
        Ok(Response {
            status,
            session,
            sse,
            body,
        })
    }

    /// POSTs `body`; returns the status, the session id header and the answer's JSON text
    /// (the body, or the `data` of the SSE event that answers `id`).
    async fn post(
        &mut self,
        body: String,
        id: Option<u64>,
    ) -> Result<(StatusCode, Option<String>, Vec<u8>), String> {
        let response = self.exchange("POST", &body).await?;
        let status = StatusCode::from_u16(response.status).map_err(|e| e.to_string())?;
        if !response.sse {
            return Ok((status, response.session, response.body));
        }
        // The SSE event that carries the answer: a data line with our id.
        let text = String::from_utf8_lossy(&response.body);
        let needle = id.map(|id| format!("\"id\":{id}"));
        let answer = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .find(|data| needle.as_deref().is_none_or(|n| data.contains(n)))
            .unwrap_or("");
        Ok((status, response.session, answer.as_bytes().to_vec()))
    }

    async fn request(&mut self, method: &str, params: &str) -> Result<(Vec<u8>, u64), String> {
        let name = if self.modern {
            serde_json::from_str::<Value>(params)
                .ok()
                .and_then(|p| p["name"].as_str().map(str::to_owned))
        } else {
            None
        };
        self.request_named(method, name.as_deref(), params).await
    }

    /// What this client's modern requests carry in `_meta` from now on.
    pub(crate) fn declare(&mut self, meta: &'static str) {
        self.meta = meta;
    }

    /// [`request`](Self::request) with the target already known (the hot path: no parse of
    /// `params` to find the `Mcp-Name` header).
    pub(crate) async fn request_named(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: &str,
    ) -> Result<(Vec<u8>, u64), String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = if self.modern {
            // `_meta` first in params, and the headers that mirror the body.
            self.method_header.clear();
            self.method_header.push_str(method);
            match (&mut self.name_header, name) {
                (Some(held), Some(name)) if held == name => {}
                (slot, name) => *slot = name.map(str::to_owned),
            }
            let rest = params.strip_prefix('{').unwrap_or("}");
            let separator = if rest.starts_with('}') { "" } else { "," };
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"_meta":{meta}{separator}{rest}}}"#,
                meta = self.meta
            )
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
        };
        let (status, _, answer) = self.post(body, Some(id)).await?;
        if status != StatusCode::OK {
            return Err(format!(
                "{method}: HTTP {status}: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        Ok((answer, id))
    }

    pub(crate) async fn initialize(&mut self) -> Result<(), String> {
        if self.modern {
            // No handshake: one discover checks the server speaks 2026-07-28.
            let (answer, _) = self.request("server/discover", "{}").await?;
            let answer: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
            if answer["result"]["supportedVersions"]
                .as_array()
                .is_none_or(|v| !v.iter().any(|v| v == "2026-07-28"))
            {
                return Err(format!("server/discover: {answer}"));
            }
            return Ok(());
        }
        let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolwire-loadgen","version":"1"}}}"#;
        let (status, session, answer) = self.post(body.into(), Some(0)).await?;
        let answer: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
        if status != StatusCode::OK || !answer["result"]["protocolVersion"].is_string() {
            return Err(format!("initialize: HTTP {status}: {answer}"));
        }
        self.session = session;
        let (status, _, _) = self
            .post(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
                None,
            )
            .await?;
        if !(status == StatusCode::ACCEPTED
            || status == StatusCode::OK
            || status == StatusCode::NO_CONTENT)
        {
            return Err(format!("notifications/initialized: HTTP {status}"));
        }
        Ok(())
    }

    /// The session this client's requests carry.
    pub(crate) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Forgets the session without ending it (the next `initialize` opens another beside it).
    pub(crate) fn take_session(&mut self) -> Option<String> {
        self.session.take()
    }

    /// Carries `session` from now on (one opened on another connection).
    pub(crate) fn set_session(&mut self, session: Option<String>) {
        self.session = session;
    }

    /// Ends the session (DELETE); the next `initialize` opens another.
    pub(crate) async fn delete_session(&mut self) -> Result<(), String> {
        let response = self.exchange("DELETE", "").await?;
        // 202: rmcp accepts the end of a session rather than reporting it done.
        if !matches!(response.status, 200 | 202 | 204) {
            return Err(format!("DELETE of the session: HTTP {}", response.status));
        }
        self.session = None;
        Ok(())
    }

    /// One verified echo call; returns its latency.
    pub(crate) async fn echo(&mut self, n: u64) -> Result<Duration, String> {
        let sent = Instant::now();
        let params = format!(r#"{{"name":"echo","arguments":{{"text":"m{n}"}}}}"#);
        let (answer, id) = self
            .request_named("tools/call", Some("echo"), &params)
            .await?;
        let latency = sent.elapsed();
        check_call_text(&answer, id, Some(&format!("m{n}")))?;
        Ok(latency)
    }
}

/// What every 2026-07-28 request of the load generator declares.
pub(crate) const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

impl Client {
    /// One plain call of `tool` (no arguments); returns its latency.
    async fn plain(&mut self, tool: &str) -> Result<Duration, String> {
        let sent = Instant::now();
        let (answer, id) = self
            .request(
                "tools/call",
                &format!(r#"{{"name":"{tool}","arguments":{{}}}}"#),
            )
            .await?;
        let latency = sent.elapsed();
        check_call_text(&answer, id, None)?;
        Ok(latency)
    }

    /// One MRTR round trip of `tool`: round 1 must ask `user_name`, round 2 answers it and
    /// must complete. Returns the latency of both rounds together.
    async fn mrtr(&mut self, tool: &str) -> Result<Duration, String> {
        let sent = Instant::now();
        let (first, _) = self
            .request(
                "tools/call",
                &format!(r#"{{"name":"{tool}","arguments":{{}}}}"#),
            )
            .await?;
        let first: Value = serde_json::from_slice(&first).map_err(|e| e.to_string())?;
        if first["result"]["resultType"] != "input_required"
            || first["result"]["inputRequests"]["user_name"].is_null()
        {
            return Err(format!("round 1 of {tool}: {first}"));
        }
        let state = match first["result"]["requestState"].as_str() {
            Some(state) => format!(r#","requestState":{}"#, Value::from(state)),
            None => String::new(),
        };
        let (second, id) = self
            .request(
                "tools/call",
                &format!(
                    r#"{{"name":"{tool}","arguments":{{}},"inputResponses":{{"user_name":{{"action":"accept","content":{{"name":"Ann"}}}}}}{state}}}"#
                ),
            )
            .await?;
        let latency = sent.elapsed();
        check_call_text(&second, id, None)?;
        Ok(latency)
    }
}

/// Sequential MRTR round trips against pairs of plain calls, alternating, one phase long.
async fn measure_mrtr(plan: &Plan, port: u16, tool: &str) -> Result<Value, String> {
    let mut client = Client::open(port, Rc::new(Cell::new(0)), true).await?;
    client.initialize().await?;
    for _ in 0..200 {
        client.plain("test_simple_text").await?;
        client.mrtr(tool).await?;
    }
    let (mut pairs, mut rounds) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while start.elapsed() < plan.phase {
        let one = client.plain("test_simple_text").await?;
        let two = client.plain("test_simple_text").await?;
        pairs.push(one + two);
        rounds.push(client.mrtr(tool).await?);
    }
    let elapsed = start.elapsed();
    let two_calls = latency_summary(pairs, elapsed);
    let mrtr = latency_summary(rounds, elapsed);
    Ok(json!({
        "transport": "http",
        "modern": true,
        "mrtr_tool": tool,
        "two_plain_calls": two_calls,
        "mrtr_round_trip": mrtr,
        "errors": 0,
    }))
}

pub(crate) fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

pub(crate) async fn spawn(command: &[String], port: u16) -> Result<Child, String> {
    let args: Vec<String> = command
        .iter()
        .map(|a| a.replace("{port}", &port.to_string()))
        .collect();
    let child = crate::conn::start_server(&args, std::process::Stdio::null)?;
    // Ready once the port accepts connections (builds and JIT warm-up may take a while).
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(child);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the server did not listen on port {port} within 180 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn run_all(plan: &Plan) -> Result<Value, String> {
    tokio::task::LocalSet::new().run_until(run(plan)).await
}

async fn run(plan: &Plan) -> Result<Value, String> {
    if !plan.command.iter().any(|a| a.contains("{port}")) {
        return Err("the server command needs a {port} argument".into());
    }
    let port = free_port()?;
    let mut child = spawn(&plan.command, port).await?;
    let pid = child.id().ok_or("the server exited")?;
    // One timer for the whole measurement, none per exchange: its phases are bounded by the
    // plan, so a server that stalls fails the run within ANSWER_TIMEOUT of their length.
    let limit = match plan.tasks {
        // The soak runs its tasks to the end, then waits for them to expire.
        Some(_) => Duration::from_secs(1800),
        None if plan.soak.is_some() || plan.faults.is_some() || plan.sessions.is_some() => {
            Duration::from_secs(3600)
        }
        None => plan.phase * 2 + ANSWER_TIMEOUT,
    };
    let work = async {
        if plan.session_per_call {
            return crate::session_per_call::http(plan, port, pid).await;
        }
        if let Some(total) = plan.sessions {
            return crate::sessions::http(port, pid, total).await;
        }
        match (&plan.mrtr_tool, plan.tasks, plan.soak, plan.faults) {
            (Some(tool), ..) => measure_mrtr(plan, port, tool).await,
            (None, Some(total), ..) => crate::tasks::soak(plan, port, pid, total).await,
            (None, None, Some(total), _) => {
                crate::soak::http(plan, port, pid, total, plan.calls_per_session).await
            }
            (None, None, None, Some(total)) => crate::faults::http(plan, port, pid, total).await,
            (None, None, None, None) => measure(plan, port, pid).await,
        }
    };
    let outcome = tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
        Err(format!(
            "the server stalled: the measurement did not end within {} s",
            limit.as_secs()
        ))
    });
    // Forked workers (uvicorn's, Node's cluster) are killed with the server: a killed
    // supervisor may leave them serving the port.
    let workers: Vec<String> = proc_stats::tree(pid)
        .into_iter()
        .skip(1)
        .map(|pid| pid.to_string())
        .collect();
    let _ = child.start_kill();
    if !workers.is_empty() {
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .args(&workers)
            .status();
    }
    let _ = child.wait().await;
    outcome
}

async fn measure(plan: &Plan, port: u16, pid: u32) -> Result<Value, String> {
    let reopened = Rc::new(Cell::new(0u64));
    let mut clients = Vec::with_capacity(plan.http_clients);
    for _ in 0..plan.http_clients {
        let mut client = Client::open(port, reopened.clone(), plan.modern).await?;
        client.initialize().await?;
        clients.push(client);
    }
    let sessions = clients.iter().filter(|c| c.session.is_some()).count();
    // Warm up every connection (JITs, caches, allocators).
    for (c, client) in clients.iter_mut().enumerate() {
        for n in 0..50 {
            client.echo((c * 1000 + n) as u64).await?;
        }
    }

    // Sequential: one client, one call at a time.
    let mut latencies = Vec::new();
    let start = Instant::now();
    let mut n = 1_000_000;
    while start.elapsed() < plan.phase {
        latencies.push(clients[0].echo(n).await?);
        n += 1;
    }
    let sequential = latency_summary(latencies, start.elapsed());

    // Concurrent: every client calls in a closed loop.
    let cpu_before = proc_stats::cpu_time(pid);
    let own_before = proc_stats::cpu_time(std::process::id());
    let count = Rc::new(Cell::new(0u64));
    plan.announce("concurrent", "started");
    let start = Instant::now();
    let deadline = start + plan.phase;
    let mut tasks = Vec::new();
    for mut client in clients {
        let count = count.clone();
        tasks.push(tokio::task::spawn_local(async move {
            while Instant::now() < deadline {
                let n = count.get();
                count.set(n + 1);
                client.echo(3_000_000 + n).await?;
            }
            Ok::<_, String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let elapsed = start.elapsed();
    plan.announce("concurrent", "ended");
    let calls = count.get();
    let per_call = |before, after| round(proc_stats::cpu_us_per(before, after, calls), 2);
    let concurrent = json!({
        "clients": plan.http_clients,
        "calls": calls,
        "calls_per_s": round(calls as f64 / elapsed.as_secs_f64(), 0),
        "server_cpu_us_per_call": per_call(cpu_before, proc_stats::cpu_time(pid)),
        "client_cpu_us_per_call": per_call(own_before, proc_stats::cpu_time(std::process::id())),
    });
    Ok(json!({
        "transport": "http",
        "modern": plan.modern,
        "sessions": sessions,
        "sequential": sequential,
        "concurrent": concurrent,
        "peak_rss_kib": proc_stats::peak_rss_kib(pid),
        "reopened_idle_connections": reopened.get(),
        "errors": 0,
    }))
}
