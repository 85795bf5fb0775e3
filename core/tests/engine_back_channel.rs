//! Requests from the server to the client (elicitation, sampling, roots): correlation, the
//! capabilities and versions they need, error answers, their timeout and how progress extends
//! it, and cancellation along with the call that asked.

mod common;

use std::time::Duration;

use common::{Client, call, cancel, is_error_text, matches};
use serde_json::{Value, json};
use toolwire::{Context, Error, RequestOptions, Server, Tool, ToolError, ToolOutput};

fn back_channel_server() -> Server {
    Server::builder("test", "1")
        .tool(Tool::new("ask"), |ctx: Context, _args: Value| async move {
            let answer = ctx
                .elicit(json!({"message": "Which region?", "requestedSchema": {"type": "object", "properties": {"r": {"type": "string"}}}}), RequestOptions::default())
                .await?;
            Ok(ToolOutput::text(answer["content"]["r"].as_str().unwrap_or("none").to_owned()))
        })
        .tool(Tool::new("sample"), |ctx: Context, _args: Value| async move {
            let answer = ctx.sample(json!({"messages": [], "maxTokens": 5}), RequestOptions::default()).await?;
            Ok(ToolOutput::text(answer["model"].as_str().unwrap_or_default().to_owned()))
        })
        .tool(Tool::new("roots"), |ctx: Context, _args: Value| async move {
            match ctx.list_roots(RequestOptions::default()).await {
                Ok(roots) => Ok(ToolOutput::text(json!(roots).to_string())),
                Err(err) => Err(ToolError::new(err.to_string())),
            }
        })
        .tool(Tool::new("both"), |ctx: Context, _args: Value| async move {
            let answers = ctx
                .ask_all(
                    vec![
                        ("roots/list".to_owned(), json!({})),
                        ("elicitation/create".to_owned(), json!({"message": "Sure?"})),
                    ],
                    RequestOptions::default(),
                )
                .await?;
            Ok(ToolOutput::text(format!(
                "{} root(s), {}",
                answers[0]["roots"].as_array().map_or(0, Vec::len),
                answers[1]["action"].as_str().unwrap_or("?")
            )))
        })
        .tool(Tool::new("slow_answer"), |ctx: Context, _args: Value| async move {
            let opts = RequestOptions::with_timeout(Duration::from_millis(150));
            match ctx.request("roots/list", json!({}), opts).await {
                Ok(_) => Ok(ToolOutput::text("answered")),
                Err(Error::Timeout { .. }) => Ok(ToolOutput::text("timed out")),
                Err(other) => Err(other.into()),
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn elicitation_round_trip_with_correlation() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"elicitation": {}}))
        .await;
    client.send(&call(1, "ask", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Which region?");
    let id = request["id"].clone();
    assert!(id.is_i64(), "server ids are integers: {id}");
    assert_eq!(request["params"]["_meta"]["progressToken"], id);
    // A response with the right number but the wrong type is not ours.
    client.send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": {"action": "accept", "content": {"r": "us"}}}));
    client.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"r": "eu"}}}));
    let answer = client.recv().await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "eu", "{answer}");
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn the_batch_form_asks_one_question_after_the_other_in_a_session() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"elicitation": {}, "roots": {}}))
        .await;
    client.send(&call(1, "both", json!({})));
    let first = client.recv().await.unwrap();
    assert_eq!(first["method"], "roots/list", "{first}");
    client.send(
        &json!({"jsonrpc": "2.0", "id": first["id"], "result": {"roots": [{"uri": "file:///a"}]}}),
    );
    let second = client.recv().await.unwrap();
    assert_eq!(second["method"], "elicitation/create", "{second}");
    client.send(&json!({"jsonrpc": "2.0", "id": second["id"], "result": {"action": "decline"}}));
    let answer = client.recv().await.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "1 root(s), decline",
        "{answer}"
    );
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn back_channel_needs_declared_capabilities() {
    let server = back_channel_server();
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "ask", json!({})));
    let text = is_error_text(&client.recv().await.unwrap());
    assert!(text.contains("elicitation"), "{text}");
    client.send(&call(2, "sample", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("sampling"));
    client.send(&call(3, "roots", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("roots"));
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn list_roots_reads_the_roots_and_refuses_a_malformed_answer() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client.initialize("2025-11-25", json!({"roots": {}})).await;
    client.send(&call(1, "roots", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "roots/list");
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"uri": "file:///w", "name": "work"}]}}));
    let answer = client.recv().await.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], r#"[{"name":"work","uri":"file:///w"}]"#,
        "{answer}"
    );
    client.send(&call(2, "roots", json!({})));
    let request = client.recv().await.unwrap();
    client.send(
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"name": "no uri"}]}}),
    );
    let text = is_error_text(&client.recv().await.unwrap());
    assert!(text.contains("roots/list result is malformed"), "{text}");
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn elicitation_needs_a_version_that_has_it() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-03-26", json!({"elicitation": {}}))
        .await;
    client.send(&call(1, "ask", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("elicitation"));
}

#[tokio::test]
async fn client_error_answer_reaches_the_handler() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"sampling": {}}))
        .await;
    client.send(&call(1, "sample", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user rejected"}}));
    let text = is_error_text(&client.recv().await.unwrap());
    assert!(text.contains("user rejected"), "{text}");
}

/// In paused time: the clock moves only when every task waits, straight to the next timer, so
/// the 150 ms timeout and the 100 ms between progress notifications are exact, however busy
/// the machine is.
#[tokio::test(start_paused = true)]
async fn back_channel_timeout_sends_cancelled_and_progress_extends_it() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client.initialize("2025-11-25", json!({"roots": {}})).await;

    // No answer: after 150 ms the server gives up and tells the client.
    let start = tokio::time::Instant::now();
    client.send(&call(1, "slow_answer", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "roots/list");
    let cancelled = client.recv().await.unwrap();
    assert!(
        matches(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request["id"], "reason": "timed out"}}),
            &cancelled
        ),
        "{cancelled}"
    );
    assert_eq!(
        client.recv().await.unwrap()["result"]["content"][0]["text"],
        "timed out"
    );
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(150) && waited < Duration::from_millis(200),
        "gave up after {waited:?}, not at the 150 ms timeout"
    );
    // A late answer to the abandoned request is ignored.
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}));

    // Progress every 100 ms keeps it alive past 150 ms; then the answer arrives. (This sleep
    // is the client's pace: in paused time, the server has handled everything sent so far
    // before the clock moves.)
    client.send(&call(2, "slow_answer", json!({})));
    let request = client.recv().await.unwrap();
    let token = request["params"]["_meta"]["progressToken"].clone();
    for step in 1..=4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": step}}));
    }
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}));
    assert_eq!(
        client.recv().await.unwrap()["result"]["content"][0]["text"],
        "answered"
    );
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn cancelling_a_call_cancels_its_back_channel_request() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"elicitation": {}}))
        .await;
    client.send(&call(7, "ask", json!({})));
    let request = client.recv().await.unwrap();
    client.send(&cancel(7));
    let cancelled = client.recv().await.unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    assert!(
        client.finish().await.is_empty(),
        "the cancelled call must not answer"
    );
}
