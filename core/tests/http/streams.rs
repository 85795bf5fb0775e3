//! Answers as JSON or SSE, sessions kept apart, streams resumed after `Last-Event-ID`, and
//! requests to the client on the call's stream.

use std::time::Duration;

use hyper::StatusCode;
use serde_json::{Value, json};
use toolwire::transport::http::{HttpOptions, HttpServer};
use toolwire::{Context, Tool, ToolError, ToolOutput};

use super::support::*;

#[tokio::test]
async fn quick_answers_are_json_and_slow_ones_stream_with_their_progress() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let quick = conn
        .post(Some(&session), &call(1, "echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        header(quick.headers(), "content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(json_body(quick).await["result"]["content"][0]["text"], "hi");

    let mut request = call(2, "steps", json!({"steps": 3, "tag": "a"}));
    request["params"]["_meta"] = json!({"progressToken": "tok"});
    let mut events = Events::new(conn.post(Some(&session), &request).await);
    let priming = events.next().await.expect("priming event");
    assert!(priming.data.is_empty() && priming.id.as_deref().is_some_and(|id| id.ends_with("-0")));
    let messages = events.rest().await;
    let progress: Vec<f64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap_or_default())
        .collect();
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .count(),
        3
    );
    let last = messages.last().expect("the answer");
    assert_eq!(last["id"], 2);
    assert_eq!(last["result"]["content"][0]["text"], "done \"a\"");
    server.shutdown().await;
}

#[tokio::test]
async fn sessions_never_see_each_others_messages() {
    let Served {
        http: server,
        tools,
        ..
    } = serve_watched(HttpOptions::default()).await;
    let mut a = Conn::open(&server).await;
    let mut b = Conn::open(&server).await;
    let session_a = a.open_session(json!({})).await;
    let session_b = b.open_session(json!({})).await;
    assert_ne!(session_a, session_b);
    // A's standalone stream is open while B's calls run and send progress and logs.
    let mut a_get = Conn::open(&server).await;
    let standalone = a_get.get_stream(&session_a, None).await;
    assert_eq!(standalone.status(), StatusCode::OK);
    let mut standalone = Events::new(standalone);
    assert!(standalone.next().await.expect("priming").data.is_empty());

    let mut request_b = call(1, "steps", json!({"steps": 2, "tag": "b"}));
    request_b["params"]["_meta"] = json!({"progressToken": 1});
    let mut request_a = call(1, "steps", json!({"steps": 2, "tag": "a"}));
    request_a["params"]["_meta"] = json!({"progressToken": 1});
    let (reply_a, reply_b) = tokio::join!(
        a.post(Some(&session_a), &request_a),
        b.post(Some(&session_b), &request_b)
    );
    let (messages_a, messages_b) =
        tokio::join!(async { Events::new(reply_a).rest().await }, async {
            Events::new(reply_b).rest().await
        });
    for message in &messages_a {
        assert!(
            !message.to_string().contains("\"b\""),
            "A saw B's message {message}"
        );
    }
    for message in &messages_b {
        assert!(
            !message.to_string().contains("\"a\""),
            "B saw A's message {message}"
        );
    }
    assert_eq!(
        messages_a.last().unwrap()["result"]["content"][0]["text"],
        "done \"a\""
    );
    assert_eq!(
        messages_b.last().unwrap()["result"]["content"][0]["text"],
        "done \"b\""
    );
    // Nothing went to A's standalone stream (its calls' messages are on their own streams):
    // the first event on it is a list change made after every call above was answered.
    let noop = |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("")) };
    tools.add_tool(Tool::new("fence"), noop).unwrap();
    let first = standalone.next().await.expect("the list change");
    assert_eq!(
        serde_json::from_str::<Value>(&first.data).ok(),
        Some(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        "unexpected standalone event {first:?}"
    );
    // A second standalone stream is a conflict; B's id does not open A's.
    let second = a.get_stream(&session_a, None).await;
    assert_eq!(second.status(), StatusCode::CONFLICT);
    server.shutdown().await;
}

#[tokio::test]
async fn a_released_stream_is_resumed_after_last_event_id() {
    let Served {
        http: server, gate, ..
    } = serve_watched(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(5, "poll", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "p"});
    let mut events = Events::new(conn.post(Some(&session), &request).await);
    let mut last_id = None;
    let mut retry = None;
    while let Some(event) = events.next().await {
        if event.retry.is_some() {
            retry = event.retry;
        }
        if event.id.is_some() {
            last_id = event.id;
        }
    }
    assert_eq!(
        retry,
        Some(1000),
        "a retry hint before the connection closed"
    );
    let last_id = last_id.expect("events had ids");
    assert!(
        last_id.ends_with("-1"),
        "progress 1 was the last event before the close: {last_id}"
    );
    // The call goes on (until the gate lets it finish); resuming gets what came after,
    // including the answer.
    let mut get = Conn::open(&server).await;
    let resumed = get.get_stream(&session, Some(&last_id)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    gate.release();
    let messages = Events::new(resumed).rest().await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["params"]["progress"], 2);
    assert_eq!(messages[1]["id"], 5);
    assert_eq!(messages[1]["result"]["content"][0]["text"], "polled");
    // Replaying the finished stream again from its start gives the whole stream.
    let first = last_id.replace("-1", "-0");
    let again = get.get_stream(&session, Some(&first)).await;
    assert_eq!(Events::new(again).rest().await.len(), 3);
    // Unknown streams are refused with 400, not 404 (the session is fine).
    let unknown = get.get_stream(&session, Some("p99-3")).await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    server.shutdown().await;
}

/// A POST on a raw connection of its own, which the test can drop mid-answer as a network
/// blip would, and then know that the server has let it go.
struct RawPost {
    stream: tokio::net::TcpStream,
    received: String,
}

impl RawPost {
    async fn send(server: &HttpServer, session: &str, body: &Value) -> RawPost {
        use tokio::io::AsyncWriteExt;
        let mut stream = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        let body = body.to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            server.local_addr(),
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .await
            .expect("write the request");
        RawPost {
            stream,
            received: String::new(),
        }
    }

    /// Reads until an SSE event whose data contains `needle` has come; that event's id.
    async fn id_of_event_with(&mut self, needle: &str) -> String {
        use tokio::io::AsyncReadExt;
        let read = async {
            let mut buf = [0u8; 4096];
            loop {
                let mut id = None;
                for line in self.received.lines() {
                    if let Some(value) = line.strip_prefix("id: ") {
                        id = Some(value.to_owned());
                    } else if line.starts_with("data: ")
                        && line.contains(needle)
                        && let Some(id) = id.take()
                    {
                        return id;
                    }
                }
                let n = self.stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "the server closed early: {:?}", self.received);
                self.received.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .unwrap_or_else(|_| panic!("no event with {needle:?} within 10 s"))
    }

    /// Closes the client's side, then waits until the server has closed its side too: it has
    /// let the connection, and the answer it was streaming there, go.
    async fn hang_up(mut self) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        self.stream.shutdown().await.expect("close our side");
        let closed = async {
            let mut buf = [0u8; 4096];
            while let Ok(1..) = self.stream.read(&mut buf).await {}
        };
        tokio::time::timeout(Duration::from_secs(10), closed)
            .await
            .expect("the server closed the connection within 10 s");
    }
}

#[tokio::test]
async fn a_stream_the_client_dropped_is_resumed_and_the_call_was_not_cancelled() {
    let Served {
        http: server, gate, ..
    } = serve_watched(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut request = call(6, "held", json!({}));
    request["params"]["_meta"] = json!({"progressToken": "q"});
    let mut post = RawPost::send(&server, &session, &request).await;
    let last_id = post.id_of_event_with("notifications/progress").await;
    // The client drops the connection mid-call (a network blip), and the server lets it go:
    // the call goes on, and what it sends meanwhile is kept for the client.
    post.hang_up().await;
    gate.release();
    let mut again = Conn::open(&server).await;
    let resumed = again.get_stream(&session, Some(&last_id)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let messages = Events::new(resumed).rest().await;
    let answer = messages.last().expect("the answer after the replay");
    assert_eq!(answer["id"], 6);
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    let replayed_progress = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(
        replayed_progress, 1,
        "progress 2 after the last event seen: {messages:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn elicitation_travels_on_the_call_stream_and_the_answer_comes_by_post() {
    let server = serve(HttpOptions::default()).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({"elicitation": {}})).await;
    let mut events = Events::new(conn.post(Some(&session), &call(9, "ask", json!({}))).await);
    events.next().await.expect("priming");
    let request: Value = serde_json::from_str(&events.next().await.expect("request").data).unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let mut other = Conn::open(&server).await;
    let answer = other
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"r": "eu"}}}),
        )
        .await;
    assert_eq!(answer.status(), StatusCode::ACCEPTED);
    let messages = events.rest().await;
    assert_eq!(
        messages.last().unwrap()["result"]["content"][0]["text"],
        "eu"
    );
    server.shutdown().await;
}

/// The step numbers of the `steps` tool's log messages among `events`.
fn logged_steps(events: &[Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .filter(|m| m["method"] == "notifications/message")
        .filter_map(|m| m["params"]["data"]["step"].as_u64())
        .collect()
}

/// A reader that stops reading holds at most `max_sse_buffered_bytes` in the server: past that
/// its connection is let go while the stream goes on, and the client resumes it with
/// `Last-Event-ID`, losing nothing.
#[tokio::test]
async fn a_stalled_stream_reader_is_let_go_and_resumes_without_loss() {
    let mut options = HttpOptions::default();
    // JSON answers: the call's logs go to the session's standalone stream.
    options.response_mode = toolwire::transport::http::ResponseMode::Json;
    options.max_sse_buffered_bytes = 64 * 1024;
    options.event_store =
        std::sync::Arc::new(toolwire::transport::http::MemoryEventStore::new(10_000, 4));
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let session = conn.open_session(json!({})).await;
    let mut reader = Conn::open_narrow(&server).await;
    let mut standalone = Events::new(reader.get_stream(&session, None).await);
    let priming = standalone.next().await.expect("the priming event");
    assert!(priming.data.is_empty());

    // About 16 MB of log messages while the stream's reader reads nothing: far more than the
    // kernel's buffers on both ends.
    let (steps, tag) = (400, "x".repeat(40_000));
    let reply = conn
        .post(
            Some(&session),
            &call(2, "steps", json!({"steps": steps, "tag": tag})),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    let answer = json_body(reply).await;
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("done"))
    );

    // The connection was let go: its body ends after what was queued, short of the last step.
    let mut seen = Vec::new();
    let mut retry = None;
    while let Some(event) = standalone.next().await {
        retry = retry.or(event.retry);
        seen.push(event);
    }
    let first = logged_steps(&seen);
    let last_id = seen
        .iter()
        .rev()
        .find_map(|e| e.id.clone())
        .expect("an event id");
    assert!(
        !first.is_empty() && (first.len() as u64) < steps,
        "{} of {steps} steps before the end",
        first.len()
    );
    assert!(retry.is_some(), "a retry hint before the server let go");

    // Resumed: everything after the last event seen, in order, nothing lost.
    let mut resumed = Events::new(conn.get_stream(&session, Some(&last_id)).await);
    let mut all = first;
    while all.last() != Some(&steps) {
        let event = resumed.next().await.expect("the rest of the stream");
        all.extend(logged_steps(&[event]));
    }
    assert_eq!(all, (1..=steps).collect::<Vec<_>>());
    server.shutdown().await;
}
