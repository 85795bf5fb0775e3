//! A principal's calls are limited together, over all its sessions and stateless requests:
//! one token holder cannot take the server's call slots by opening more sessions.

use hyper::StatusCode;
use serde_json::{Value, json};
use toolwire::ServerOptions;
use toolwire::transport::http::{BearerAuth, HttpOptions, HttpServer};

use super::modern;
use super::support::*;

/// The test server behind bearer tokens ("<subject>-token"), each principal allowed `limit`
/// calls at once and no waiting room: a call past a limit is refused at once, which the test
/// can see.
async fn serve_with_tokens(limit: usize, stateless: bool) -> (HttpServer, Gate) {
    let mut engine = ServerOptions::default();
    engine.max_concurrent_calls_per_principal = limit;
    engine.max_queued_calls = 0;
    let (hold, gate) = gate();
    let mut options = HttpOptions::default();
    options.auth = Some(BearerAuth::new(subjects, "https://auth.example.com"));
    options.stateless = stateless;
    let server = test_server_with(hold, engine)
        .serve_http("127.0.0.1:0", options)
        .await
        .expect("bind 127.0.0.1:0");
    (server, gate)
}

/// A `held` call in `session`, on a connection of its own (its answer streams until the
/// test lets it end), with its events.
async fn start_held(server: &HttpServer, token: &str, session: &str, id: i64) -> (Conn, Events) {
    let mut conn = Conn::open_with_token(server, token).await;
    let reply = conn.post(Some(session), &call(id, "held", json!({}))).await;
    assert_eq!(reply.status(), StatusCode::OK);
    (conn, Events::new(reply))
}

/// The one answer of a reply, JSON or an SSE stream (an answer ready at once comes as JSON).
async fn answer_of(reply: hyper::Response<hyper::body::Incoming>) -> Value {
    if header(reply.headers(), "content-type").as_deref() == Some("application/json") {
        return json_body(reply).await;
    }
    Events::new(reply).rest().await.pop().expect("an answer")
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_principals_calls_are_limited_together_over_its_sessions_and_requests() {
    let (server, mut gate) = serve_with_tokens(2, false).await;

    // Alice runs two calls, one in each of two sessions: her limit.
    let mut alice = Conn::open_with_token(&server, "alice-token").await;
    let first = alice.open_session(json!({})).await;
    let second = alice.open_session(json!({})).await;
    let mut running = vec![start_held(&server, "alice-token", &first, 1).await];
    gate.started().await;
    running.push(start_held(&server, "alice-token", &second, 1).await);
    gate.started().await;

    // A third session of hers, or a 2026-07-28 request of hers, finds it taken.
    let third = alice.open_session(json!({})).await;
    let refused = alice
        .post(Some(&third), &call(2, "echo", json!({"text": "hi"})))
        .await;
    let answer = answer_of(refused).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text(&answer).starts_with("Server busy: this principal already has 2 calls running"),
        "{answer}"
    );
    let stateless = modern::request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let refused = json_body(modern::post(&mut alice, &stateless, &[]).await).await;
    assert!(
        text(&refused).starts_with("Server busy: this principal"),
        "{refused}"
    );

    // Bob is not held back by her, in a session or in a 2026-07-28 request.
    let mut bob = Conn::open_with_token(&server, "bob-token").await;
    let bobs = bob.open_session(json!({})).await;
    let answer = answer_of(
        bob.post(Some(&bobs), &call(2, "echo", json!({"text": "bob"})))
            .await,
    )
    .await;
    assert_eq!(text(&answer), "bob", "{answer}");
    let answer = json_body(modern::post(&mut bob, &stateless, &[]).await).await;
    assert_eq!(text(&answer), "hi", "{answer}");

    // Once her calls end, she is served again.
    gate.release();
    gate.release();
    for (_conn, mut events) in running {
        let answer = events.rest().await.pop().expect("an answer");
        assert_eq!(text(&answer), "released", "{answer}");
    }
    let answer = json_body(modern::post(&mut alice, &stateless, &[]).await).await;
    assert_eq!(text(&answer), "hi", "{answer}");
    server.shutdown().await;
}

/// Stateless mode: each POST is a session of its own, so only the principal's limit holds a
/// token holder back.
#[tokio::test]
async fn a_principals_stateless_requests_are_limited_together() {
    let (server, mut gate) = serve_with_tokens(1, true).await;
    let mut held = Conn::open_with_token(&server, "alice-token").await;
    let reply = held.post(None, &call(1, "held", json!({}))).await;
    assert_eq!(reply.status(), StatusCode::OK);
    gate.started().await;

    let mut alice = Conn::open_with_token(&server, "alice-token").await;
    let echo = call(2, "echo", json!({"text": "hi"}));
    let refused = answer_of(alice.post(None, &echo).await).await;
    assert!(
        text(&refused).starts_with("Server busy: this principal already has 1 calls running"),
        "{refused}"
    );
    let mut bob = Conn::open_with_token(&server, "bob-token").await;
    assert_eq!(text(&answer_of(bob.post(None, &echo).await).await), "hi");

    gate.release();
    assert_eq!(text(&answer_of(reply).await), "released");
    assert_eq!(text(&answer_of(alice.post(None, &echo).await).await), "hi");
    server.shutdown().await;
}
