//! Request bodies: read whole in chunks, refused past the limit.

use std::time::Duration;

use serde_json::json;
use toolwire::transport::http::{HttpOptions, HttpServer};

use super::support::*;

/// Sends a POST whose body goes in chunks (no Content-Length, so its size is learnt only by
/// reading it) on a connection of its own; the status line's code and the body.
async fn post_chunked(server: &HttpServer, chunks: &[&str]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n",
        server.local_addr()
    );
    for chunk in chunks {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    // The server may answer and close before taking all of an over-long body.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {reply:?}"));
    let body = reply
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

#[tokio::test]
async fn a_body_in_chunks_is_read_whole_and_refused_once_past_the_limit() {
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(400);
    let server = serve(options).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "chunked", "version": "1"}}})
    .to_string();
    let (head, rest) = init.split_at(init.len() / 3);
    let (middle, tail) = rest.split_at(rest.len() / 2);
    let (status, body) = post_chunked(&server, &[head, middle, tail]).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"protocolVersion\":\"2025-11-25\""),
        "{body}"
    );

    let filler = format!("\"{}\"", "x".repeat(150));
    let (status, body) =
        post_chunked(&server, &["[", &filler, ",", &filler, ",", &filler, "]"]).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("exceeds the limit of 400 bytes"), "{body}");

    // The server goes on serving.
    let mut conn = Conn::open(&server).await;
    conn.open_session(json!({})).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_refused_before_it_is_sent() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut options = HttpOptions::default();
    options.max_body_bytes = Some(400);
    let server = serve(options).await;
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    // The head only: were the server to read up to the limit first, it would wait here.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n",
        server.local_addr()
    );
    stream.write_all(head.as_bytes()).await.expect("write head");
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&reply).contains("exceeds the limit") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => reply.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(read.is_ok(), "no answer before the body came: {reply:?}");
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("exceeds the limit of 400 bytes"), "{reply}");
    server.shutdown().await;
}
