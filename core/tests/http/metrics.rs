//! The Prometheus endpoint: served on its own path when asked for, behind the Host guard,
//! `GET` only; live sessions and open SSE streams counted as they come and go.

use hyper::{Method, StatusCode};
use serde_json::json;
use toolwire::transport::http::HttpOptions;

use super::support::*;

async fn scrape(conn: &mut Conn) -> String {
    let reply = conn.send_to("/metrics", Method::GET, &[], "").await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert_eq!(
        header(reply.headers(), "content-type").as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = http_body_util::BodyExt::collect(reply.into_body())
        .await
        .expect("the metrics")
        .to_bytes();
    String::from_utf8(body.to_vec()).expect("UTF-8 text")
}

fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

#[tokio::test]
async fn the_metrics_path_serves_the_counters_as_prometheus_text() {
    let mut options = HttpOptions::default();
    options.metrics_path = Some("/metrics".into());
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let before = scrape(&mut conn).await;
    assert!(has_line(&before, "toolwire_sessions 0"), "{before}");
    assert!(has_line(&before, "toolwire_sse_streams 0"), "{before}");

    let session = conn.open_session(json!({})).await;
    let answer = conn
        .post(Some(&session), &call(1, "echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        json_body(answer).await["result"]["content"][0]["text"],
        "hi"
    );
    let stream = conn.get_stream(&session, None).await;
    assert_eq!(stream.status(), StatusCode::OK);

    let mut scraper = Conn::open(&server).await;
    let during = scrape(&mut scraper).await;
    for line in [
        "toolwire_sessions 1",
        "toolwire_sse_streams 1",
        r#"toolwire_requests_total{method="initialize",outcome="result"} 1"#,
        r#"toolwire_tool_calls_total{tool="echo",outcome="result"} 1"#,
        r#"toolwire_tool_calls_in_flight{tool="echo"} 0"#,
    ] {
        assert!(has_line(&during, line), "no {line:?} in:\n{during}");
    }

    // The stream's connection goes: the stream is no longer open. The session ends (DELETE).
    drop(stream);
    drop(conn);
    let mut conn = Conn::open(&server).await;
    let deleted = conn
        .send(Method::DELETE, &[("mcp-session-id", &session)], "")
        .await;
    assert_eq!(deleted.status(), StatusCode::OK);
    let after = scrape(&mut scraper).await;
    assert!(has_line(&after, "toolwire_sessions 0"), "{after}");
}

#[tokio::test]
async fn the_metrics_path_is_get_only_guarded_and_off_by_default() {
    let mut options = HttpOptions::default();
    options.metrics_path = Some("/metrics".into());
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let posted = conn.send_to("/metrics", Method::POST, &[], "{}").await;
    assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(posted.headers(), "allow").as_deref(), Some("GET"));
    let foreign = conn
        .send_to("/metrics", Method::GET, &[("host", "evil.example")], "")
        .await;
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    let plain = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&plain).await;
    let not_served = conn.send_to("/metrics", Method::GET, &[], "").await;
    assert_eq!(not_served.status(), StatusCode::NOT_FOUND);

    let (hold, _) = gate();
    let mut clash = HttpOptions::default();
    clash.metrics_path = Some("/mcp".into());
    let refused = test_server(hold).serve_http("127.0.0.1:0", clash).await;
    assert!(
        matches!(&refused, Err(toolwire::Error::InvalidArgument(why)) if why.contains("metrics path")),
        "{:?}",
        refused.err()
    );
}
