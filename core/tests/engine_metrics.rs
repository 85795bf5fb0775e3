//! Metrics: every request counted by method and every call by tool, with how it ended and how
//! long it took; refusals by limit; live sessions; the same in the Prometheus text; and nothing
//! counted when metrics are off.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Client;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolwire::middleware::{Middleware, Outcome, RequestInfo};
use toolwire::{Context, Server, ServerOptions, Tool, ToolError, ToolOutput};

fn server_with(options: ServerOptions, gate: Arc<Notify>) -> Server {
    let echo = |_ctx: Context, args: Value| async move {
        Ok::<_, ToolError>(ToolOutput::text(
            args["text"].as_str().unwrap_or("").to_owned(),
        ))
    };
    let fail = |_ctx: Context, _args: Value| async { Err::<ToolOutput, _>(ToolError::new("no")) };
    let refuse = |_ctx: Context, _args: Value| async {
        Err::<ToolOutput, _>(ToolError::protocol(-32001, "Forbidden"))
    };
    let held = move |ctx: Context, _args: Value| {
        let gate = gate.clone();
        async move {
            tokio::select! {
                () = gate.notified() => Ok(ToolOutput::text("released")),
                () = ctx.cancelled() => Ok(ToolOutput::text("cancelled")),
            }
        }
    };
    Server::builder("metered", "1")
        .options(options)
        .tool(
            Tool::new("echo").input_schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            })),
            echo,
        )
        .tool(Tool::new("fail"), fail)
        .tool(Tool::new("refuse"), refuse)
        .tool(Tool::new("held").max_concurrency(1), held)
        .tool(Tool::new("never_called"), echo)
        .build()
        .unwrap()
}

/// A middleware that lets everything through and tells the test how each request ended.
#[derive(Default)]
struct Ended {
    outcomes: Mutex<Vec<Outcome>>,
    heard: Notify,
}

impl Ended {
    async fn until(&self, outcome: Outcome) {
        loop {
            let heard = self.heard.notified();
            if self.outcomes.lock().unwrap().contains(&outcome) {
                return;
            }
            heard.await;
        }
    }
}

impl Middleware for Ended {
    fn after(&self, _request: &RequestInfo, outcome: &Outcome, _elapsed: Duration) {
        self.outcomes.lock().unwrap().push(outcome.clone());
        self.heard.notify_waiters();
    }
}

fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args}})
}

async fn answer(client: &mut Client, message: Value) -> Value {
    client.send(&message);
    client.recv().await.expect("an answer")
}

#[tokio::test]
async fn requests_and_calls_are_counted_by_how_they_ended() {
    let gate = Arc::new(Notify::new());
    let mut options = ServerOptions::default();
    // One call of `held` runs and none waits: a second is refused as busy.
    options.max_queued_calls = 0;
    let server = server_with(options, gate.clone());
    // Hears each request's end, after it was counted: the test waits for that, not for time.
    let ended = Arc::new(Ended::default());
    server.add_middleware(ended.clone());
    let mut client = Client::initialized(&server).await;
    assert_eq!(server.metrics()["sessions"], 1);

    let ok = answer(&mut client, call(1, "echo", json!({"text": "hi"}))).await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    let invalid = answer(&mut client, call(2, "echo", json!({"text": 3}))).await;
    assert_eq!(invalid["result"]["isError"], true);
    let failed = answer(&mut client, call(3, "fail", json!({}))).await;
    assert_eq!(failed["result"]["isError"], true);
    let refused = answer(&mut client, call(4, "refuse", json!({}))).await;
    assert_eq!(refused["error"]["code"], -32001);
    let unknown = answer(&mut client, call(5, "nope", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let no_method = answer(
        &mut client,
        json!({"jsonrpc": "2.0", "id": 6, "method": "no/such"}),
    )
    .await;
    assert_eq!(no_method["error"]["code"], -32601);
    let _ = answer(
        &mut client,
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    )
    .await;

    // `held` runs (its handler is waiting); while it does, it is in flight.
    client.send(&call(8, "held", json!({})));
    let busy = answer(&mut client, call(9, "held", json!({}))).await;
    assert_eq!(busy["result"]["isError"], true);
    assert!(
        busy["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Server busy"),
        "{busy}"
    );
    let metrics = server.metrics();
    assert_eq!(metrics["tools"]["held"]["inFlight"], 1, "{metrics}");
    assert_eq!(metrics["callsInFlight"], 1);
    assert_eq!(metrics["refused"]["calls"], 1);
    // Cancelled: no answer, counted as such.
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 8}}),
    );
    ended.until(Outcome::Cancelled).await;

    let metrics = server.metrics();
    let tools = &metrics["tools"];
    assert_eq!(
        tools["echo"]["outcomes"],
        json!({"result": 1, "tool_error": 1})
    );
    assert_eq!(tools["fail"]["outcomes"], json!({"tool_error": 1}));
    assert_eq!(tools["refuse"]["outcomes"], json!({"server_error": 1}));
    assert_eq!(
        tools["held"]["outcomes"],
        json!({"cancelled": 1, "tool_error": 1})
    );
    assert_eq!(tools["held"]["inFlight"], 0);
    // Registered tools show from the start; unknown names make no series.
    assert_eq!(tools["never_called"]["calls"], 0);
    assert!(tools.get("nope").is_none());
    let calls = &metrics["methods"]["tools/call"];
    assert_eq!(calls["calls"], 7);
    assert_eq!(calls["outcomes"]["invalid_params"], 1);
    assert_eq!(calls["latency"]["count"], 7);
    assert!(calls["latency"]["sumSeconds"].as_f64().unwrap() > 0.0);
    let buckets = calls["latency"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 16);
    assert_eq!(buckets[15], json!({"le": 10.0, "count": 7}));
    assert_eq!(
        metrics["methods"]["other"]["outcomes"],
        json!({"method_not_found": 1})
    );
    assert_eq!(metrics["methods"]["ping"]["calls"], 1);
    assert_eq!(metrics["methods"]["initialize"]["calls"], 1);
    assert_eq!(metrics["callsInFlight"], 0);

    let text = server.metrics_text();
    for line in [
        "# TYPE toolwire_requests_total counter",
        r#"toolwire_requests_total{method="tools/call",outcome="result"} 1"#,
        r#"toolwire_requests_total{method="other",outcome="method_not_found"} 1"#,
        r#"toolwire_tool_calls_total{tool="held",outcome="cancelled"} 1"#,
        r#"toolwire_tool_calls_total{tool="never_called",outcome="result"} 0"#,
        "# TYPE toolwire_tool_call_duration_seconds histogram",
        r#"toolwire_tool_call_duration_seconds_count{tool="echo"} 2"#,
        r#"toolwire_tool_call_duration_seconds_bucket{tool="echo",le="+Inf"} 2"#,
        r#"toolwire_refused_total{limit="calls"} 1"#,
        "toolwire_sessions 1",
        "toolwire_calls_queued 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in:\n{text}"
        );
    }
    assert_eq!(
        toolwire::METRICS_CONTENT_TYPE,
        "text/plain; version=0.0.4; charset=utf-8"
    );

    client.finish().await;
    assert_eq!(
        server.metrics()["sessions"],
        0,
        "an ended session is not live"
    );
}

#[tokio::test]
async fn modern_rounds_and_batches_are_counted() {
    let server = Server::builder("metered", "1")
        .tool(Tool::new("ask"), |ctx: Context, _args: Value| async move {
            let answer = ctx
                .elicit(
                    json!({"message": "Which?", "requestedSchema": {"type": "object"}}),
                    toolwire::RequestOptions::default(),
                )
                .await?;
            Ok(ToolOutput::text(answer["action"].to_string()))
        })
        .build()
        .unwrap();
    let mut modern = Client::new(&server);
    let asked = answer(
        &mut modern,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ask", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}}),
    )
    .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let metrics = server.metrics();
    assert_eq!(
        metrics["tools"]["ask"]["outcomes"],
        json!({"input_required": 1})
    );
    assert_eq!(metrics["sessions"], 0, "a stateless request is no session");

    // 2025-03-26 has batches: each request of one counts.
    let mut legacy = Client::new(&server);
    legacy.initialize("2025-03-26", json!({})).await;
    legacy.send_raw(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#);
    let batch = legacy.recv().await.expect("the batch's answer");
    assert_eq!(batch.as_array().map(Vec::len), Some(2), "{batch}");
    let methods = &server.metrics()["methods"];
    assert_eq!(methods["ping"]["outcomes"], json!({"result": 1}));
    assert_eq!(methods["tools/list"]["outcomes"], json!({"result": 1}));
}

#[tokio::test]
async fn nothing_is_counted_when_metrics_are_off() {
    let mut options = ServerOptions::default();
    options.metrics = false;
    let server = server_with(options, Arc::new(Notify::new()));
    let mut client = Client::initialized(&server).await;
    let ok = answer(&mut client, call(1, "echo", json!({"text": "hi"}))).await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    let metrics = server.metrics();
    assert_eq!(metrics["enabled"], false);
    assert_eq!(metrics["methods"], json!({}));
    assert_eq!(metrics["tools"], json!({}));
    assert_eq!(metrics["sessions"], 0);
    assert!(!server.metrics_text().contains("toolwire_tool_calls_total{"));
}
