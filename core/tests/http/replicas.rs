//! Legacy (2025-11-25) sessions over replicas sharing one real Redis: a session opened on A
//! goes on on B (as when A died and the balancer sent the client elsewhere), and its stream
//! resumes there after `Last-Event-ID`.

use hyper::StatusCode;
use serde_json::json;
use toolwire::ServerOptions;
use toolwire::redis::{Redis, RedisOptions};
use toolwire::transport::http::{HttpOptions, HttpServer};

use crate::redis_server::RedisServer;
use crate::support::{Conn, Events, call, gate, json_body, test_builder};

async fn replica(redis: &RedisServer) -> HttpServer {
    let shared = Redis::connect(&redis.url(), RedisOptions::default()).expect("Redis answers");
    let (hold, _) = gate();
    shared
        .share(test_builder(hold, ServerOptions::default()))
        .build()
        .expect("server")
        .serve_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("bind")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_replica_goes_on_and_resumes_its_stream_on_another() {
    let redis = RedisServer::start();
    let (a, b) = (replica(&redis).await, replica(&redis).await);
    let mut on_a = Conn::open(&a).await;
    let session = on_a.open_session(json!({})).await;
    let mut request = call(5, "steps", json!({"steps": 2, "tag": "t"}));
    request["params"]["_meta"] = json!({"progressToken": "p"});
    let mut events = Events::new(on_a.post(Some(&session), &request).await);
    let mut ids = Vec::new();
    while let Some(event) = events.next().await {
        if let Some(id) = event.id.filter(|_| !event.data.is_empty()) {
            ids.push(id);
        }
    }
    assert!(ids.len() >= 3, "progress, logs and the answer: {ids:?}");

    // On B, which never saw the session: resumed after the first event, the rest replayed.
    let mut on_b = Conn::open(&b).await;
    let resumed = on_b.get_stream(&session, Some(&ids[0])).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let replayed = Events::new(resumed).rest().await;
    assert_eq!(replayed.len(), ids.len() - 1, "{replayed:?}");
    let answer = replayed.last().expect("the answer");
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "done \"t\"");

    // The session goes on on B, as initialized on A.
    let echoed = json_body(
        on_b.post(Some(&session), &call(6, "echo", json!({"text": "on b"})))
            .await,
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "on b", "{echoed}");

    // An id no replica ever gave stays unknown everywhere.
    assert_eq!(on_b.ping("0123456789abcdef").await, StatusCode::NOT_FOUND);
    // Deleted on B: gone for A too (its record is gone from Redis; A still holds its own copy
    // until it ends, which a real balancer never routes to while B has the session).
    let deleted = on_b
        .send(
            hyper::Method::DELETE,
            &[
                ("mcp-session-id", session.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            "",
        )
        .await;
    assert_eq!(deleted.status(), StatusCode::OK);
    let c = replica(&redis).await;
    let mut on_c = Conn::open(&c).await;
    assert_eq!(on_c.ping(&session).await, StatusCode::NOT_FOUND);
    for server in [a, b, c] {
        server.shutdown().await;
    }
}
