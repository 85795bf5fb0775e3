//! 2026-07-28 over Streamable HTTP: the body decides the era, headers are checked against it,
//! every error echoes the id with its status from one table, answers stream with
//! `X-Accel-Buffering: no`, the client closing a stream cancels its request, and legacy
//! sessions go on beside it on the same endpoint.

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use super::support::{Conn, Events, gate, header, json_body, serve, serve_watched, test_server};
use toolwire::transport::http::HttpOptions;

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";

pub(crate) fn request(id: Value, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({PV: "2026-07-28", CC: {}});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A POST with the headers a 2026-07-28 client sends, plus `extra`.
pub(crate) async fn post(
    conn: &mut Conn,
    body: &Value,
    extra: &[(&str, &str)],
) -> hyper::Response<hyper::body::Incoming> {
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    let name = body["params"]["name"]
        .as_str()
        .or_else(|| body["params"]["uri"].as_str())
        .map(str::to_owned);
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method.as_str()),
    ];
    if let Some(name) = &name {
        headers.push(("mcp-name", name.as_str()));
    }
    for (k, v) in extra {
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        headers.push((k, v));
    }
    headers.retain(|(_, v)| !v.is_empty());
    conn.send(Method::POST, &headers, &body.to_string()).await
}

#[tokio::test]
async fn a_modern_request_is_answered_stamped_with_no_session() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let reply = post(&mut conn, &request(json!(1), "tools/list", json!({})), &[]).await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        header(reply.headers(), "mcp-session-id"),
        None,
        "no session is minted"
    );
    let body = json_body(reply).await;
    assert_eq!(body["id"], 1);
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["ttlMs"], 0);
    assert_eq!(body["result"]["cacheScope"], "private");
    assert_eq!(
        body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "http-test"
    );
    // A session header or Last-Event-ID on the modern path is ignored.
    let reply = post(
        &mut conn,
        &request(json!(2), "server/discover", json!({})),
        &[("mcp-session-id", "nope"), ("last-event-id", "x-1")],
    )
    .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        json_body(reply).await["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
}

/// A request, headers to change, and the status and code it must get.
type Refusal = (Value, Vec<(&'static str, &'static str)>, StatusCode, i64);

#[tokio::test]
async fn every_refusal_echoes_the_id_with_its_status() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let without_meta =
        json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}});
    let mut wrong_version = request(json!(7), "server/discover", json!({}));
    wrong_version["params"]["_meta"][PV] = json!("v999");
    let cases: Vec<Refusal> = vec![
        (without_meta, vec![], StatusCode::BAD_REQUEST, -32602),
        (
            wrong_version.clone(),
            vec![],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            wrong_version,
            vec![("mcp-protocol-version", "v999")],
            StatusCode::BAD_REQUEST,
            -32022,
        ),
        (
            request(json!(7), "tools/list", json!({})),
            vec![("mcp-method", "prompts/list")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(json!(7), "tools/list", json!({})),
            vec![("mcp-method", "")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(json!(7), "tools/list", json!({})),
            vec![("mcp-method", "TOOLS/LIST")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(
                json!(7),
                "tools/call",
                json!({"name": "echo", "arguments": {}}),
            ),
            vec![("mcp-name", "other")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(
                json!(7),
                "tools/call",
                json!({"name": "echo", "arguments": {}}),
            ),
            vec![("mcp-name", "")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(
                json!(7),
                "tools/call",
                json!({"name": "echo", "arguments": {}}),
            ),
            vec![("mcp-name", "=?base64?ZWNobw?=")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            request(json!(7), "ping", json!({})),
            vec![],
            StatusCode::NOT_FOUND,
            -32601,
        ),
        (
            request(json!(7), "initialize", json!({})),
            vec![],
            StatusCode::NOT_FOUND,
            -32601,
        ),
        (
            request(
                json!(7),
                "tools/call",
                json!({"name": "nope", "arguments": {}}),
            ),
            vec![],
            StatusCode::BAD_REQUEST,
            -32602,
        ),
    ];
    for (body, extra, status, code) in cases {
        let reply = post(&mut conn, &body, &extra).await;
        assert_eq!(reply.status(), status, "{body} {extra:?}");
        assert_eq!(
            header(reply.headers(), "content-type").as_deref(),
            Some("application/json")
        );
        let answer = json_body(reply).await;
        assert_eq!(answer["id"], 7, "the id is echoed: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body} {extra:?}: {answer}");
    }
    // Accepted forms: trimmed values, header names in any case, the base64 form decoded.
    for extra in [
        vec![("mcp-name", "  echo  ")],
        vec![("MCP-NAME", "echo")],
        vec![("mcp-name", "=?base64?ZWNobw==?=")],
    ] {
        let reply = post(
            &mut conn,
            &request(
                json!(8),
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "x"}}),
            ),
            &extra,
        )
        .await;
        assert_eq!(reply.status(), StatusCode::OK, "{extra:?}");
    }
    // GET and DELETE naming 2026-07-28: 405.
    for method in [Method::GET, Method::DELETE] {
        let reply = conn
            .send(
                method,
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("accept", "text/event-stream"),
                ],
                "",
            )
            .await;
        assert_eq!(reply.status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}

#[tokio::test]
async fn a_streamed_answer_carries_its_progress_and_no_buffering_hint() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let mut body = request(
        json!(3),
        "tools/call",
        json!({"name": "steps", "arguments": {"steps": 2, "tag": "t"}}),
    );
    body["params"]["_meta"]["progressToken"] = json!("p");
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let reply = post(&mut conn, &body, &[]).await;
    assert_eq!(
        header(reply.headers(), "x-accel-buffering").as_deref(),
        Some("no")
    );
    let messages = Events::new(reply).rest().await;
    let last = messages.last().expect("the answer");
    assert_eq!(last["result"]["content"][0]["text"], "done \"t\"");
    assert_eq!(last["result"]["resultType"], "complete");
    let progress = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    let logs = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!((progress, logs), (2, 2), "{messages:?}");
    assert!(messages.iter().all(|m| {
        m.get("method").is_none()
            || m["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("notifications/"))
    }));
}

#[tokio::test]
async fn closing_the_stream_cancels_the_call() {
    let served = serve_watched(HttpOptions::default()).await;
    let mut gate = served.gate;
    let http = std::sync::Arc::new(served.http);
    // A call that says nothing until it ends: its response waits for its first frame.
    let held = |id: i64| {
        let http = http.clone();
        tokio::spawn(async move {
            let mut conn = Conn::open(&http).await;
            let reply = post(
                &mut conn,
                &request(
                    json!(id),
                    "tools/call",
                    json!({"name": "held", "arguments": {}}),
                ),
                &[],
            )
            .await;
            json_body(reply).await
        })
    };
    let first = held(4);
    gate.started().await;
    // The client goes away mid-call.
    first.abort();
    assert!(first.await.is_err(), "aborted");
    let second = held(5);
    gate.started().await;
    // The semaphore is fair: were the first call still waiting, it would take this permit.
    gate.release();
    let answer = second.await.expect("the second call");
    assert_eq!(
        answer["result"]["content"][0]["text"], "released",
        "{answer}"
    );
}

#[tokio::test]
async fn legacy_sessions_and_modern_requests_share_the_endpoint() {
    let (hold, _gate) = gate();
    let tools = test_server(hold);
    let http = tools
        .serve_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("bind");
    let mut conn = Conn::open(&http).await;
    let session = conn.open_session(json!({})).await;
    let reply = post(
        &mut conn,
        &request(json!(1), "tools/list", json!({})),
        &[("mcp-session-id", session.as_str())],
    )
    .await;
    assert_eq!(
        json_body(reply).await["result"]["resultType"],
        "complete",
        "the body decides"
    );
    assert_eq!(
        conn.ping(&session).await,
        StatusCode::OK,
        "the session lives on"
    );
    // A listen stream hears a list change made meanwhile, tagged with its id.
    let reply = post(
        &mut conn,
        &request(
            json!("L1"),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
        &[],
    )
    .await;
    assert_eq!(
        header(reply.headers(), "x-accel-buffering").as_deref(),
        Some("no")
    );
    let mut events = Events::new(reply);
    let ack: Value = serde_json::from_str(&events.next().await.expect("ack").data).expect("json");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(tools.remove_tool("poll"));
    let changed: Value =
        serde_json::from_str(&events.next().await.expect("change").data).expect("json");
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L1"
    );
    // Shutdown ends the listen gracefully with its result, and nothing follows.
    http.stop_token().cancel();
    let rest = events.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], "L1");
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    http.wait().await;
}
