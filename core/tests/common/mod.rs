//! Test helpers shared by the integration tests: a JSON pattern matcher, a small client that
//! drives a session through the bring-your-own-transport entry point, and the message and
//! server builders the engine tests share.

#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod rng;

use std::time::Duration;

use serde_json::{Value, json};
use toolwire::{Context, Outbound, Server, ServerOptions, Session, Tool, ToolError, ToolOutput};

/// A `tools/call` request.
pub fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// `notifications/cancelled` for the request `id`.
pub fn cancel(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
}

/// The text of an error result; panics if `answer` is not one.
pub fn is_error_text(answer: &Value) -> String {
    assert_eq!(
        answer["result"]["isError"], true,
        "not an error result: {answer}"
    );
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A handler as a plain function, so a test can list tools in a `Vec`.
pub type Handler =
    fn(Context, Value) -> futures_util::future::BoxFuture<'static, Result<ToolOutput, ToolError>>;

/// A server with `options` and `tools`.
pub fn server_with(options: ServerOptions, tools: Vec<(Tool, Handler)>) -> Server {
    let mut builder = Server::builder("test", "1").options(options);
    for (tool, handler) in tools {
        builder = builder.tool(tool, handler);
    }
    builder.build().expect("valid test server")
}

/// Pattern matching as documented in tests/vectors/README.md.
pub fn matches(pattern: &Value, actual: &Value) -> bool {
    match (pattern, actual) {
        (Value::String(p), _) if p == "$any" => true,
        (Value::String(p), Value::String(_)) if p == "$string" => true,
        (Value::String(p), Value::Number(_)) if p == "$number" => true,
        // A value a vector captures for later steps (see `Captured` in vectors.rs).
        (Value::String(p), Value::String(_)) if p.starts_with("$capture:") => true,
        (Value::String(p), Value::String(a)) if p.starts_with("$prefix:") => {
            a.starts_with(&p["$prefix:".len()..])
        }
        (Value::Object(p), Value::Object(a)) => {
            p.len() == a.len()
                && p.iter()
                    .all(|(k, pv)| a.get(k).is_some_and(|av| matches(pv, av)))
        }
        (Value::Array(p), Value::Array(a)) => {
            p.len() == a.len() && p.iter().zip(a).all(|(pv, av)| matches(pv, av))
        }
        (Value::Number(p), Value::Number(a)) => {
            match (p.as_i64(), a.as_i64(), p.as_u64(), a.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => p.as_f64() == a.as_f64(),
            }
        }
        _ => pattern == actual,
    }
}

/// Matches `actual` (an array) against `patterns` in any order.
pub fn matches_unordered(patterns: &[Value], actual: &[Value]) -> bool {
    if patterns.len() != actual.len() {
        return false;
    }
    let mut used = vec![false; actual.len()];
    patterns.iter().all(|p| {
        let found = actual
            .iter()
            .enumerate()
            .find(|(i, a)| !used[*i] && matches(p, a));
        match found {
            Some((i, _)) => {
                used[i] = true;
                true
            }
            None => false,
        }
    })
}

/// A client driving one session in process.
pub struct Client {
    pub session: Session,
    pub outbound: Outbound,
}

impl Client {
    pub fn new(server: &Server) -> Self {
        let (session, outbound) = server.session().expect("inside a tokio runtime");
        Client { session, outbound }
    }

    pub fn send(&self, message: &Value) {
        self.session.handle_frame(message.to_string().as_bytes());
    }

    pub fn send_raw(&self, bytes: &[u8]) {
        self.session.handle_frame(bytes);
    }

    /// The next outbound frame as JSON, waiting up to 10 s.
    pub async fn recv(&mut self) -> Result<Value, String> {
        match tokio::time::timeout(Duration::from_secs(10), self.outbound.recv()).await {
            Err(_) => Err("no frame within 10 s".into()),
            Ok(None) => Err("the session ended".into()),
            Ok(Some(frame)) => serde_json::from_str(&frame)
                .map_err(|e| format!("server sent invalid JSON ({e}): {frame}")),
        }
    }

    /// Waits `wait` and returns `true` if nothing was sent meanwhile.
    pub async fn silent_for(&mut self, wait: Duration) -> Result<(), Value> {
        match tokio::time::timeout(wait, self.outbound.recv()).await {
            Err(_) => Ok(()),
            Ok(None) => Ok(()),
            Ok(Some(frame)) => Err(serde_json::from_str(&frame).unwrap_or(Value::String(frame))),
        }
    }

    /// A client whose session is initialized at the latest version with no capabilities.
    pub async fn initialized(server: &Server) -> Self {
        let mut client = Client::new(server);
        client.initialize("2025-11-25", json!({})).await;
        client
    }

    /// `initialize` (id 0) with `version` and `capabilities`, then `notifications/initialized`.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": capabilities,
                       "clientInfo": {"name": "vector-runner", "version": "1.0"}}
        }));
        let answer = self.recv().await.expect("initialize answer");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Sends a request and returns the next frame.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.recv().await.expect("an answer")
    }

    /// Shuts the session down (EOF) and returns whatever else it sent.
    pub async fn finish(mut self) -> Vec<String> {
        self.session.shutdown().await;
        let mut rest = Vec::new();
        while let Some(frame) = self.outbound.recv().await {
            rest.push(frame);
        }
        rest
    }
}
