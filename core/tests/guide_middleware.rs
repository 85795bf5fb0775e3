//! The Rust server and test of docs/guides/middleware.md, which includes the parts between the
//! markers.

// --8<-- [start:server]
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolwire::middleware::{Around, Next, Refusal, RequestInfo};
use toolwire::{Context, ErrorCode, ErrorObject, Server, Tool, ToolError, ToolOutput};

/// Staff only for `wipe`; every request that gets through, and how it ended, in the audit.
struct StaffOnly {
    audit: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl Around for StaffOnly {
    async fn around(&self, request: RequestInfo, next: Next) -> Result<(), Refusal> {
        // Before next: decide. `principal` is the bearer token's subject over HTTP.
        let staff = matches!(request.principal.as_deref(), Some("ada" | "grace"));
        if request.name.as_deref() == Some("wipe") && !staff {
            let forbidden = ErrorObject::new(ErrorCode(-32001), "Forbidden".to_owned());
            return Err(Refusal::Error(forbidden)); // this JSON-RPC error instead of the call
        }
        let ended = next.run().await; // handled here; returns once the answer is sent
        let line = format!(
            "{} {}: {:?}",
            request.method,
            request.name.unwrap_or_default(),
            ended.outcome
        );
        self.audit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
        Ok(())
    }
}

pub fn guarded_server(audit: Arc<Mutex<Vec<String>>>) -> Result<Server, toolwire::Error> {
    let text = |text: &'static str| {
        move |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text(text)) }
    };
    Server::builder("guarded", "1.0.0")
        .tool(Tool::new("ping"), text("pong"))
        .tool(Tool::new("wipe"), text("wiped"))
        .around("staff-only", StaffOnly { audit })
        .build()
}
// --8<-- [end:server]

// --8<-- [start:test]
use serde_json::json;
use toolwire::client::{Client, ClientOptions};

#[tokio::test]
async fn the_rule_the_audit_and_the_metrics() -> Result<(), toolwire::Error> {
    let audit = Arc::new(Mutex::new(Vec::new()));
    let server = guarded_server(audit.clone())?;
    let client = Client::connect(&server, ClientOptions::default(), None).await?;
    let pong = client.call_tool("ping", json!({}), None).await?;
    assert_eq!(pong["content"][0]["text"], "pong");
    // A test client has no principal.
    let refused = client.call_tool("wipe", json!({}), None).await;
    assert!(matches!(refused, Err(toolwire::Error::Rpc(error)) if error.code.0 == -32001));
    client.close().await;

    // The refused call never reached next.
    assert_eq!(*audit.lock().unwrap(), ["tools/call ping: Result"]);
    // The engine's own counters: a JSON snapshot, and Prometheus text for a /metrics route.
    let metrics = server.metrics();
    assert_eq!(
        metrics["methods"]["tools/call"]["outcomes"],
        json!({"result": 1, "refused": 1})
    );
    assert!(
        server
            .metrics_text()
            .contains(r#"toolwire_tool_calls_total{tool="ping",outcome="result"} 1"#)
    );
    Ok(())
}
// --8<-- [end:test]
