//! Session lifetimes: ended elsewhere, the session limit, idle reaping, and many at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::json;
use toolwire::transport::http::{BearerAuth, HttpOptions, HttpServer};

use super::support::*;

/// A connection remembers the session it used last; a session deleted elsewhere or reaped
/// must be gone for that connection too. (Here nothing else holds the ended session; the
/// unit test in `endpoint.rs` covers the table's listing while something still does.)
#[tokio::test]
async fn a_session_ended_elsewhere_is_gone_for_the_connection_that_used_it_last() {
    let Served {
        http: server,
        mut ended,
        ..
    } = serve_watched(reaping_after(Duration::from_millis(200))).await;
    let mut user = Conn::open(&server).await;
    let mut other = Conn::open(&server).await;

    let deleted = user.open_session(json!({})).await;
    assert_eq!(user.ping(&deleted).await, StatusCode::OK);
    let reply = other
        .send(Method::DELETE, &[("mcp-session-id", &deleted)], "")
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(user.ping(&deleted).await, StatusCode::NOT_FOUND, "deleted");

    let reaped = user.open_session(json!({})).await;
    assert_eq!(user.ping(&reaped).await, StatusCode::OK);
    // Left alone, it is ended once idle for 200 ms.
    ended.until(&reaped).await;
    assert_eq!(user.ping(&reaped).await, StatusCode::NOT_FOUND, "reaped");

    // A session used on two connections stays one session for both.
    let shared = user.open_session(json!({})).await;
    assert_eq!(other.ping(&shared).await, StatusCode::OK);
    assert_eq!(user.ping(&shared).await, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn past_the_session_limit_new_sessions_get_503_and_deleting_one_frees_a_place() {
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let first = conn.open_session(json!({})).await;
    let second = conn.open_session(json!({})).await;
    // In use, so neither is ended to make room.
    let _first_stream = busy(&conn, &server, &first).await;
    let _second_stream = busy(&conn, &server, &second).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let refused = conn.post(None, &init).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(header(refused.headers(), "mcp-session-id").is_none());
    let deleted = conn
        .send(Method::DELETE, &[("mcp-session-id", &first)], "")
        .await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(conn.post(None, &init).await.status(), StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn idle_sessions_are_reaped_but_not_while_a_call_runs() {
    let Served {
        http: server,
        gate,
        mut ended,
        ..
    } = serve_watched(reaping_after(Duration::from_millis(200))).await;
    let mut long = Conn::open(&server).await;
    let busy = long.open_session(json!({})).await;
    let mut request = call(1, "held", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "b"});
    let mut answers = Events::new(long.post(Some(&busy), &request).await);
    answers.next().await.expect("priming");
    // The call's first progress is out: the call runs, and the busy session's requests have
    // all touched it by now.
    answers.next().await.expect("the first progress");
    // Opened after all that, so by the time this session has been idle long enough to be
    // ended, the busy one has gone as long without a request: only its call keeps it.
    let mut conn = Conn::open(&server).await;
    let idle = conn.open_session(json!({})).await;
    ended.until(&idle).await;
    let gone = conn
        .post(
            Some(&idle),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        )
        .await;
    assert_eq!(
        gone.status(),
        StatusCode::NOT_FOUND,
        "the idle session was ended"
    );
    gate.release();
    let answer = answers.rest().await.pop().expect("answer");
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    let alive = long
        .post(
            Some(&busy),
            &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .await;
    assert_eq!(
        alive.status(),
        StatusCode::OK,
        "the busy session lived through the call"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_sessions_lose_nothing() {
    const SESSIONS: usize = 1000;
    const CONNECTIONS: usize = 50;
    // All from 127.0.0.1, one client: its own limit must not end any of them.
    let mut options = HttpOptions::default();
    options.max_sessions_per_client = SESSIONS;
    let server = Arc::new(serve(options).await);
    let answered = Arc::new(AtomicUsize::new(0));
    // Every session is opened first, so all 1,000 are live at once; then each makes calls.
    let mut tasks = Vec::new();
    for c in 0..CONNECTIONS {
        let server = server.clone();
        let answered = answered.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(&server).await;
            let mut sessions = Vec::new();
            for _ in 0..SESSIONS / CONNECTIONS {
                sessions.push(conn.open_session(json!({})).await);
            }
            for round in 0..3 {
                for (s, session) in sessions.iter().enumerate() {
                    let text = format!("conn {c} session {s} round {round}");
                    let reply = conn
                        .post(Some(session), &call(round, "echo", json!({"text": text})))
                        .await;
                    assert_eq!(reply.status(), StatusCode::OK);
                    let body = json_body(reply).await;
                    assert_eq!(body["id"], round);
                    assert_eq!(body["result"]["content"][0]["text"], text);
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a client task failed");
    }
    assert_eq!(answered.load(Ordering::Relaxed), SESSIONS * 3);
    match Arc::try_unwrap(server) {
        Ok(server) => server.shutdown().await,
        Err(_) => panic!("server handle still shared"),
    }
}

fn with_tokens(max_sessions: usize, max_sessions_per_client: usize) -> HttpOptions {
    let mut options = HttpOptions::default();
    options.auth = Some(BearerAuth::new(subjects, "https://auth.example.com"));
    options.max_sessions = max_sessions;
    options.max_sessions_per_client = max_sessions_per_client;
    options
}

fn initialize() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// A session with its standalone stream open is in use: never ended to make room. The stream
/// takes a connection of its own (HTTP/1.1 sends nothing else while a body streams), opened
/// like `conn`'s.
async fn busy(
    conn: &Conn,
    server: &HttpServer,
    session: &str,
) -> (Conn, hyper::Response<hyper::body::Incoming>) {
    let mut streaming = Conn::open(server).await;
    streaming.token = conn.token.clone();
    let stream = streaming.get_stream(session, None).await;
    assert_eq!(stream.status(), StatusCode::OK);
    (streaming, stream)
}

#[tokio::test]
async fn a_client_at_its_session_limit_loses_its_idle_session_else_gets_429() {
    let server = serve(with_tokens(100, 2)).await;
    let mut alice = Conn::open_with_token(&server, "alice-token").await;
    let streamed = alice.open_session(json!({})).await;
    let _stream = busy(&alice, &server, &streamed).await;
    let idle = alice.open_session(json!({})).await;

    // At the limit: the idle session makes room; the one in use is kept.
    let third = alice.open_session(json!({})).await;
    assert_eq!(alice.ping(&idle).await, StatusCode::NOT_FOUND, "ended");
    assert_eq!(alice.ping(&streamed).await, StatusCode::OK);
    assert_eq!(alice.ping(&third).await, StatusCode::OK);

    // Both in use: the next is refused, and nothing of alice's is ended for it.
    let _third_stream = busy(&alice, &server, &third).await;
    let refused = alice.post(None, &initialize()).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        header(refused.headers(), "retry-after").as_deref(),
        Some("1")
    );
    assert!(header(refused.headers(), "mcp-session-id").is_none());
    let message = json_body(refused).await["error"]["message"].to_string();
    assert!(message.contains("holds 2 live sessions"), "{message}");
    assert_eq!(alice.ping(&streamed).await, StatusCode::OK);
    assert_eq!(alice.ping(&third).await, StatusCode::OK);

    // Another subject has a limit of its own.
    let mut bob = Conn::open_with_token(&server, "bob-token").await;
    let first = bob.open_session(json!({})).await;
    let second = bob.open_session(json!({})).await;
    assert_eq!(bob.ping(&first).await, StatusCode::OK);
    assert_eq!(bob.ping(&second).await, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn a_full_table_makes_room_from_the_greediest_clients_idle_sessions() {
    let server = serve(with_tokens(3, 100)).await;
    let mut greedy = Conn::open_with_token(&server, "greedy-token").await;
    let streamed = greedy.open_session(json!({})).await;
    let _stream = busy(&greedy, &server, &streamed).await;
    let idle = [
        greedy.open_session(json!({})).await,
        greedy.open_session(json!({})).await,
    ];

    // Full: a newcomer gets in, and one of the greedy client's idle sessions is ended.
    let mut bob = Conn::open_with_token(&server, "bob-token").await;
    let bobs = bob.open_session(json!({})).await;
    let mut kept = Vec::new();
    for session in &idle {
        match greedy.ping(session).await {
            StatusCode::OK => kept.push(session.clone()),
            status => assert_eq!(status, StatusCode::NOT_FOUND),
        }
    }
    assert_eq!(kept.len(), 1, "exactly one idle session was ended");
    assert_eq!(greedy.ping(&streamed).await, StatusCode::OK);

    // The greedy client's sessions all in use: no one holding fewer loses one, so 503.
    let _kept_stream = busy(&greedy, &server, &kept[0]).await;
    let mut carol = Conn::open_with_token(&server, "carol-token").await;
    let refused = carol.post(None, &initialize()).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        header(refused.headers(), "retry-after").as_deref(),
        Some("1")
    );
    assert_eq!(
        bob.ping(&bobs).await,
        StatusCode::OK,
        "as many as carol will"
    );
    assert_eq!(greedy.ping(&kept[0]).await, StatusCode::OK);
    server.shutdown().await;
}

/// Without tokens the client is the peer's address; Linux routes all of 127/8 to loopback,
/// so a second client can connect from 127.0.0.2.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn without_tokens_sessions_are_counted_per_peer_address() {
    let mut options = HttpOptions::default();
    options.max_sessions_per_client = 1;
    let server = serve(options).await;
    let mut first = Conn::open(&server).await;
    let held = first.open_session(json!({})).await;
    let _stream = busy(&first, &server, &held).await;
    // Another connection from the same address is the same client.
    let mut again = Conn::open(&server).await;
    let refused = again.post(None, &initialize()).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);

    let other_address = "127.0.0.2".parse().expect("address");
    let mut other = Conn::open_from(&server, other_address).await;
    let theirs = other.open_session(json!({})).await;
    assert_eq!(other.ping(&theirs).await, StatusCode::OK);
    assert_eq!(first.ping(&held).await, StatusCode::OK);
    server.shutdown().await;
}
