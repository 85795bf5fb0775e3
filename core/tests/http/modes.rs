//! Stateless and JSON-only modes.

use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::json;
use toolwire::transport::http::{HttpOptions, ResponseMode};

use super::support::*;

#[tokio::test]
async fn stateless_mode_answers_without_sessions_and_refuses_requests_to_the_client() {
    let mut options = HttpOptions::default();
    options.stateless = true;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let reply = conn
        .send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &call(1, "echo", json!({"text": "alone"})).to_string(),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert!(header(reply.headers(), "mcp-session-id").is_none());
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "alone"
    );
    // A tool that asks the client fails at once with a clear message instead of hanging.
    let asked = tokio::time::timeout(
        Duration::from_secs(5),
        conn.send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            &call(2, "ask", json!({})).to_string(),
        ),
    )
    .await
    .expect("no hang");
    let answer = match header(asked.headers(), "content-type").as_deref() {
        Some("application/json") => json_body(asked).await,
        _ => Events::new(asked).rest().await.pop().expect("answer"),
    };
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("elicitation") || text.contains("stateless"),
        "{text}"
    );
    for (method, allow) in [(Method::GET, "POST"), (Method::DELETE, "POST")] {
        let reply = conn
            .send(method, &[("accept", "text/event-stream")], "")
            .await;
        assert_eq!(reply.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header(reply.headers(), "allow").as_deref(), Some(allow));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_stateless_call_runs_as_one_task_with_no_session_watcher() {
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.response_mode = ResponseMode::Json;
    let Served {
        http: server,
        mut gate,
        ..
    } = serve_watched(options).await;
    let mut conn = Conn::open(&server).await;
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // One exchange first, so the server's task for this connection is already counted.
    let echoed = conn
        .send(
            Method::POST,
            &headers,
            &call(1, "echo", json!({"text": "hi"})).to_string(),
        )
        .await;
    assert_eq!(
        json_body(echoed).await["result"]["content"][0]["text"],
        "hi"
    );
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let held = tokio::spawn(async move {
        let reply = conn
            .send(
                Method::POST,
                &headers,
                &call(2, "held", json!({})).to_string(),
            )
            .await;
        json_body(reply).await
    });
    // The request's own task here and the call's on the server; a session made for one
    // exchange has nothing to watch, so it starts no task of its own. The handler starts
    // within the server's handling of the request, which spawns the call's task before it
    // yields: once the handler has started, every task of this exchange is counted.
    gate.started().await;
    assert_eq!(metrics.num_alive_tasks(), before + 2);
    gate.release();
    let answer = held.await.expect("the request task");
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    server.shutdown().await;
}

#[tokio::test]
async fn json_mode_always_answers_with_one_json_body() {
    let mut options = HttpOptions::default();
    options.response_mode = ResponseMode::Json;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(3, "steps", json!({"steps": 2, "tag": "j"}));
    request["params"]["_meta"] = json!({"progressToken": 3});
    let reply = conn.post(Some(&session), &request).await;
    assert_eq!(
        header(reply.headers(), "content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "done \"j\""
    );
    server.shutdown().await;
}
