//! The Streamable HTTP scenarios: N clients, each its own session on its own keep-alive
//! connection (TCP_NODELAY), against a server spawned with a free port put in place of
//! `{port}` in its command. Every answer is verified (status, id, text).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::Plan;
use crate::proc_stats;

/// One client: a connection and, if the server keeps sessions, the session id.
struct Client {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    async fn open(port: u16) -> Result<Client, String> {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake: {e}"))?;
        tokio::task::spawn_local(connection);
        Ok(Client {
            sender,
            authority: format!("127.0.0.1:{port}"),
            session: None,
            next_id: 1,
        })
    }

    /// POSTs `body`; returns the status, the session id header and the answer's JSON text
    /// (the body, or the `data` of the SSE event that answers `id`).
    async fn post(
        &mut self,
        body: String,
        id: Option<u64>,
    ) -> Result<(StatusCode, Option<String>, Vec<u8>), String> {
        let mut request = Request::post("/mcp")
            .header("host", self.authority.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session.as_str())
                .header("mcp-protocol-version", "2025-11-25");
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        if !sse {
            return Ok((status, session, bytes.to_vec()));
        }
        // The SSE event that carries the answer: a data line with our id.
        let text = String::from_utf8_lossy(&bytes);
        let needle = id.map(|id| format!("\"id\":{id}"));
        let answer = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .find(|data| needle.as_deref().is_none_or(|n| data.contains(n)))
            .unwrap_or("");
        Ok((status, session, answer.as_bytes().to_vec()))
    }

    async fn request(&mut self, method: &str, params: &str) -> Result<(Vec<u8>, u64), String> {
        let id = self.next_id;
        self.next_id += 1;
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let (status, _, answer) = self.post(body, Some(id)).await?;
        if status != StatusCode::OK {
            return Err(format!(
                "{method}: HTTP {status}: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        Ok((answer, id))
    }

    async fn initialize(&mut self) -> Result<(), String> {
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

    /// One verified echo call; returns its latency.
    async fn echo(&mut self, n: u64) -> Result<Duration, String> {
        let sent = Instant::now();
        let params = format!(r#"{{"name":"echo","arguments":{{"text":"m{n}"}}}}"#);
        let (answer, id) = self.request("tools/call", &params).await?;
        let latency = sent.elapsed();
        let value: Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&answer)))?;
        let expected = format!("m{n}");
        if value["id"] != json!(id)
            || value["result"]["content"][0]["text"].as_str() != Some(expected.as_str())
            || value["result"]["isError"] == json!(true)
        {
            return Err(format!(
                "wrong answer to echo {expected:?} (id {id}): {value}"
            ));
        }
        Ok(latency)
    }
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

async fn spawn(command: &[String], port: u16) -> Result<Child, String> {
    let args: Vec<String> = command
        .iter()
        .map(|a| a.replace("{port}", &port.to_string()))
        .collect();
    let child = Command::new(&args[0])
        .args(&args[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", args[0]))?;
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

fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

fn percentile_us(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[index].as_secs_f64() * 1e6
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
    let outcome = measure(plan, port, pid).await;
    let _ = child.start_kill();
    let _ = child.wait().await;
    outcome
}

async fn measure(plan: &Plan, port: u16, pid: u32) -> Result<Value, String> {
    let mut clients = Vec::with_capacity(plan.http_clients);
    for _ in 0..plan.http_clients {
        let mut client = Client::open(port).await?;
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
    let seq_elapsed = start.elapsed();
    latencies.sort();
    let sequential = json!({
        "calls": latencies.len(),
        "calls_per_s": round(latencies.len() as f64 / seq_elapsed.as_secs_f64(), 0),
        "p50_us": round(percentile_us(&latencies, 0.50), 1),
        "p99_us": round(percentile_us(&latencies, 0.99), 1),
    });

    // Concurrent: every client calls in a closed loop.
    let cpu_before = proc_stats::cpu_time(pid);
    let own_before = proc_stats::cpu_time(std::process::id());
    let count = Rc::new(Cell::new(0u64));
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
    let calls = count.get();
    let per_call = |before: Option<Duration>, after: Option<Duration>| match (before, after) {
        (Some(b), Some(a)) if calls > 0 => round((a - b).as_secs_f64() * 1e6 / calls as f64, 2),
        _ => f64::NAN,
    };
    let concurrent = json!({
        "clients": plan.http_clients,
        "calls": calls,
        "calls_per_s": round(calls as f64 / elapsed.as_secs_f64(), 0),
        "server_cpu_us_per_call": per_call(cpu_before, proc_stats::cpu_time(pid)),
        "client_cpu_us_per_call": per_call(own_before, proc_stats::cpu_time(std::process::id())),
    });
    Ok(json!({
        "transport": "http",
        "sessions": sessions,
        "sequential": sequential,
        "concurrent": concurrent,
        "peak_rss_kib": proc_stats::peak_rss_kib(pid),
        "errors": 0,
    }))
}
