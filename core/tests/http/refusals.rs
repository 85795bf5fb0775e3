//! Every refusal gets its status code, and the server keeps serving.

use hyper::{Method, StatusCode};
use serde_json::json;
use toolwire::transport::http::HttpOptions;

use super::support::*;

#[tokio::test]
async fn refusals_have_the_right_status_and_the_server_keeps_serving() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let json_accept = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    // (method, headers, body, expected status, what the error message says)
    type Case<'a> = (Method, Vec<(&'a str, &'a str)>, String, StatusCode, &'a str);
    let cases: Vec<Case> = vec![
        (
            Method::POST,
            json_accept.to_vec(),
            init.clone(),
            StatusCode::NOT_ACCEPTABLE,
            "accept",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "text/plain"),
                ("accept", "application/json, text/event-stream"),
            ],
            init.clone(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Media Type",
        ),
        (
            Method::POST,
            vec![("content-type", "application/json"), ("accept", "*/*")],
            "{not json".into(),
            StatusCode::BAD_REQUEST,
            "Parse error",
        ),
        (
            Method::POST,
            vec![("content-type", "application/json"), ("accept", "*/*")],
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id header is required",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-session-id", "0123"),
            ],
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
            StatusCode::NOT_FOUND,
            "unknown or expired session",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            init.clone(),
            StatusCode::BAD_REQUEST,
            "Unsupported protocol version",
        ),
        (
            Method::PUT,
            vec![],
            String::new(),
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed",
        ),
        (
            Method::GET,
            vec![("accept", "text/event-stream")],
            String::new(),
            StatusCode::BAD_REQUEST,
            "required",
        ),
        (
            Method::GET,
            vec![("accept", "application/json")],
            String::new(),
            StatusCode::NOT_ACCEPTABLE,
            "accept",
        ),
        (
            Method::DELETE,
            vec![("mcp-session-id", "nope")],
            String::new(),
            StatusCode::NOT_FOUND,
            "unknown",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("origin", "http://evil.example.com"),
            ],
            init.clone(),
            StatusCode::FORBIDDEN,
            "Origin",
        ),
        (
            Method::POST,
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("host", "evil.example.com"),
            ],
            init.clone(),
            StatusCode::FORBIDDEN,
            "Host",
        ),
    ];
    for (method, headers, body, status, says) in cases {
        let reply = conn.send(method.clone(), &headers, &body).await;
        assert_eq!(reply.status(), status, "{method} {headers:?}");
        if status == StatusCode::METHOD_NOT_ALLOWED {
            assert_eq!(
                header(reply.headers(), "allow").as_deref(),
                Some("GET, POST, DELETE")
            );
        }
        let body = json_body(reply).await;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(says),
            "{status}: {message:?} lacks {says:?}"
        );
        if status == StatusCode::BAD_REQUEST && says == "Parse error" {
            assert_eq!(body["error"]["code"], -32700);
        }
    }
    // A body over the limit (the server's 4 MiB frame limit) is refused unread; the server may
    // then close that connection, so it goes on one of its own.
    let mut big = Conn::open(&server).await;
    let huge = format!("[{}1]", "1,".repeat(2_200_000));
    let reply = big
        .send(
            Method::POST,
            &[("content-type", "application/json"), ("accept", "*/*")],
            &huge,
        )
        .await;
    assert_eq!(reply.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // The same connection still serves a good client.
    let session = conn.open_session(json!({})).await;
    let reply = conn
        .post(
            Some(&session),
            &call(7, "echo", json!({"text": "still here"})),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        json_body(reply).await["result"]["content"][0]["text"],
        "still here"
    );
    // Loopback names and origins pass.
    let ok = conn
        .send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("host", "localhost:1234"),
                ("origin", "http://localhost:5173"),
            ],
            &init,
        )
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    server.shutdown().await;
}
