//! Slow and greedy clients: a head trickled byte by byte, a kept-alive connection left idle, a
//! body that never comes, and more connections than allowed. Each limit is short here, and the
//! test waits for its event (the server closing the connection, or its refusal).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwire::transport::http::{HttpOptions, HttpServer, ResponseMode};
use toolwire::{Context, Tool, ToolError, ToolOutput};

use super::support::*;

const LIMIT: Duration = Duration::from_millis(300);

fn short_limits() -> HttpOptions {
    let mut options = HttpOptions::default();
    options.header_read_timeout = Some(LIMIT);
    options.body_read_timeout = Some(LIMIT);
    options
}

/// Everything the server sends until it closes the connection; fails if it is still open after
/// 10 s (far past every limit here).
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => reply.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let reply = String::from_utf8_lossy(&reply).into_owned();
    assert!(
        read.is_ok(),
        "the server kept the connection open: {reply:?}"
    );
    reply
}

/// A connection of its own to `server`, `text` sent on it as it is.
async fn send_raw(server: &HttpServer, text: &str) -> TcpStream {
    let mut stream = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    stream.write_all(text.as_bytes()).await.expect("write");
    stream
}

fn ping_request(server: &HttpServer, connection: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: {connection}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        server.local_addr(),
        body.len()
    )
}

#[tokio::test]
async fn a_trickled_head_is_cut_off() {
    let server = serve(short_limits()).await;
    // Half a head, then nothing more: the slowloris shape.
    let mut stream = send_raw(&server, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await;
    until_closed(&mut stream).await;
    // The server goes on serving.
    let mut fresh = send_raw(&server, &ping_request(&server, "close")).await;
    assert!(until_closed(&mut fresh).await.starts_with("HTTP/1.1 200"));
    server.shutdown().await;
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed() {
    let server = serve(short_limits()).await;
    let mut stream = send_raw(&server, &ping_request(&server, "keep-alive")).await;
    // The answer comes, then the connection idles past the limit and is closed.
    let reply = until_closed(&mut stream).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert_eq!(reply.matches("HTTP/1.1 ").count(), 1, "{reply}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_that_does_not_come_gets_408() {
    let server = serve(short_limits()).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"json",
        server.local_addr()
    );
    let mut stream = send_raw(&server, &head).await;
    let reply = until_closed(&mut stream).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("the body did not come in time"), "{reply}");
    server.shutdown().await;
}

#[tokio::test]
async fn connections_past_the_limit_are_refused_with_503() {
    let mut options = HttpOptions::default();
    options.max_connections = 2;
    let server = serve(options).await;
    // Two connections, each proven accepted by an answer on it.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = send_raw(&server, &ping_request(&server, "keep-alive")).await;
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).await.expect("an answer");
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        held.push(stream);
    }
    let mut third = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let reply = until_closed(&mut third).await;
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.contains("too many open connections"), "{reply}");
    assert!(reply.contains("\r\nretry-after: 1\r\n"), "{reply}");
    // A JSON-RPC error body, with the `"id": null` of an unread request.
    let body: Value = serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap_or_default())
        .expect("a JSON body");
    assert_eq!(body["id"], Value::Null, "{reply}");
    assert!(
        body.as_object().is_some_and(|o| o.contains_key("id")),
        "{reply}"
    );
    assert_eq!(body["error"]["code"], -32000, "{reply}");
    // One held connection goes: a new one is served once the server has seen it go (each try
    // is a whole connection and its answer; no waiting between tries).
    drop(held.pop());
    let mut tries = 0;
    loop {
        let mut next = send_raw(&server, &ping_request(&server, "close")).await;
        let reply = until_closed(&mut next).await;
        if reply.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
        tries += 1;
        assert!(
            tries < 10_000,
            "the closed connection was never counted out"
        );
        tokio::task::yield_now().await;
    }
    server.shutdown().await;
}

async fn fence(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text("fence"))
}

#[tokio::test]
async fn a_long_call_and_an_idle_stream_outlive_the_head_limit() {
    // The head limit runs only while a connection waits for a request: not while an answer is
    // being made or streamed.
    let mut options = short_limits();
    options.response_mode = ResponseMode::Json;
    let served = serve_watched(options).await;
    let mut streaming = Conn::open(&served.http).await;
    let session = streaming.open_session(json!({})).await;
    let mut events = Events::new(streaming.get_stream(&session, None).await);
    // A call whose work (60 steps of 5 ms) takes longer than the limit: its JSON answer comes.
    let mut calling = Conn::open(&served.http).await;
    let answer = json_body(
        calling
            .post(Some(&session), &call(2, "steps", json!({"steps": 60})))
            .await,
    )
    .await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    // The stream sat past the limit with nothing of its own to send (the call's logs aside):
    // it still carries the next change.
    served
        .tools
        .add_tool(Tool::new("fence"), fence)
        .expect("a new tool");
    loop {
        let event = events.next().await.expect("the stream is still open");
        if event.data.contains("notifications/tools/list_changed") {
            break;
        }
        // The call's logs, and the stream's opening event (an id with no data, to resume from).
        assert!(
            event.data.is_empty() || event.data.contains("notifications/message"),
            "{}",
            event.data
        );
    }
    served.http.shutdown().await;
}
