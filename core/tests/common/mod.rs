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

/// Pattern matching as documented in tests/vectors/README.md: core's, as every language uses.
#[allow(unused_imports, reason = "each test binary uses a different subset")]
pub use toolwire::client::vectors::{matches, matches_unordered};

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
