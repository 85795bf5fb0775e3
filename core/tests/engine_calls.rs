//! What a call answers: a panicking handler, results checked against the output schema, and
//! the logs and progress a handler sends on the way.

mod common;

use common::{Client, call, is_error_text};
use serde_json::{Value, json};
use toolwire::{Context, LogLevel, Server, Tool, ToolError, ToolOutput};

#[tokio::test]
async fn panicking_handler_is_an_error_result_and_the_server_lives_on() {
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("boom"),
            |_ctx: Context, _args: Value| async move {
                if true {
                    panic!("secret internal detail");
                }
                Ok::<_, ToolError>(ToolOutput::text("unreachable"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let answer = client
        .request(json!(1), "tools/call", json!({"name": "boom"}))
        .await;
    let text = is_error_text(&answer);
    assert_eq!(text, "Tool \"boom\" failed with an internal error");
    assert!(!answer.to_string().contains("secret"));
    assert_eq!(
        client.request(json!(2), "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn output_schema_is_enforced() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("wrong").output_schema(schema.clone()),
            |_ctx: Context, _a: Value| async {
                Ok::<_, ToolError>(ToolOutput::structured(json!({"n": "three"})))
            },
        )
        .tool(
            Tool::new("missing").output_schema(schema.clone()),
            |_ctx: Context, _a: Value| async {
                Ok::<_, ToolError>(ToolOutput::text("no structure"))
            },
        )
        .tool(
            Tool::new("failing").output_schema(schema),
            |_ctx: Context, _a: Value| async {
                Err::<ToolOutput, _>(ToolError::new("failed before producing output"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let text = is_error_text(
        &client
            .request(json!(1), "tools/call", json!({"name": "wrong"}))
            .await,
    );
    assert!(
        text.contains("does not match its outputSchema") && text.contains("/n"),
        "{text}"
    );
    let text = is_error_text(
        &client
            .request(json!(2), "tools/call", json!({"name": "missing"}))
            .await,
    );
    assert!(text.contains("no structured content"), "{text}");
    let text = is_error_text(
        &client
            .request(json!(3), "tools/call", json!({"name": "failing"}))
            .await,
    );
    assert_eq!(text, "failed before producing output");
}

#[tokio::test]
async fn logs_follow_the_session_level_and_progress_only_increases() {
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("chatty"),
            |ctx: Context, _args: Value| async move {
                ctx.log(LogLevel::Debug, "debug line");
                ctx.log_as(LogLevel::Warning, Some("db"), json!({"slow": true}));
                for p in [1.0, 1.0, 0.5, 2.0, f64::NAN] {
                    ctx.progress(p, Some(2.0), Some("working"));
                }
                Ok::<_, ToolError>(ToolOutput::text("ok"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    client.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "chatty", "_meta": {"progressToken": "p"}}}));
    let frames = [
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
    ];
    assert_eq!(
        frames[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "db", "data": {"slow": true}}})
    );
    assert_eq!(
        frames[1]["params"],
        json!({"progressToken": "p", "progress": 1, "total": 2, "message": "working"})
    );
    assert_eq!(frames[2]["params"]["progress"], 2);
    assert_eq!(frames[3]["id"], 1);

    client
        .request(json!(2), "logging/setLevel", json!({"level": "debug"}))
        .await;
    client.send(&call(3, "chatty", json!({})));
    assert_eq!(client.recv().await.unwrap()["params"]["data"], "debug line");
    assert_eq!(client.recv().await.unwrap()["params"]["level"], "warning");
    assert_eq!(
        client.recv().await.unwrap()["id"],
        3,
        "no progress without a token"
    );
    assert!(client.finish().await.is_empty());
}

/// A call in an initialized 2025-11-25 session whose `_meta` names a protocol version is
/// refused, plain as the call otherwise is; a `_meta` that names none is served.
#[tokio::test]
async fn a_legacy_call_claiming_the_modern_era_is_refused() {
    let server = toolwire_demo::build_server().unwrap();
    let mut client = Client::initialized(&server).await;
    let claiming = client
        .request(
            json!(1),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(claiming["id"], 1);
    assert_eq!(claiming["error"]["code"], -32600, "{claiming}");
    assert!(
        claiming["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("connection of their own")),
        "{claiming}"
    );
    let plain = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert_eq!(plain["result"]["content"][0]["text"], "hi", "{plain}");
}
