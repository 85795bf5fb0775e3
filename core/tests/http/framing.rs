//! HTTP/1.1 framing a proxy in front could read differently from us (request smuggling), and
//! absolute-form targets: refused with 400 and the connection closed, or checked by the guard.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolwire::transport::http::{HttpOptions, HttpServer};

use super::support::*;

/// Sends `request` as it is on a connection of its own; the reply as text, and whether the
/// server closed the connection after it (the read ended without the client closing).
async fn raw(server: &HttpServer, request: &str) -> (String, bool) {
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    // The connection's end is the event waited for; a server that keeps it open is caught by
    // the deadline once its reply has come.
    let closed = loop {
        match tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => reply.extend_from_slice(&buf[..n]),
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&reply).into_owned(), closed)
}

fn init_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "framing", "version": "1"}}})
    .to_string()
}

fn post_head(target: &str, host: &str, framing: &str) -> String {
    format!(
        "POST {target} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{framing}\r\n"
    )
}

#[tokio::test]
async fn bodies_framed_two_ways_are_refused_and_the_connection_closed() {
    let server = serve(HttpOptions::default()).await;
    let host = server.local_addr().to_string();
    let body = init_body();
    let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    // Both framings: hyper reads the body as chunked, drops Content-Length and closes the
    // connection after answering (RFC 9112 §6.3), so nothing after the body is read as a
    // request of its own.
    let both = post_head(
        "/mcp",
        &host,
        &format!(
            "Transfer-Encoding: chunked\r\nContent-Length: {}\r\n",
            chunked.len()
        ),
    ) + &chunked
        + &post_head("/mcp", &host, "Content-Length: 2\r\n")
        + "{}";
    let (reply, closed) = raw(&server, &both).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("connection: close"), "{reply}");
    assert_eq!(reply.matches("HTTP/1.1 ").count(), 1, "{reply}");
    assert!(closed, "the connection stayed open after {reply}");
    let cases = [
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n".to_owned(),
            chunked.clone(),
            // Ours: hyper takes two Transfer-Encoding headers as one list.
            "Transfer-Encoding given more than once",
        ),
        (
            "Transfer-Encoding: chunked, gzip\r\n".to_owned(),
            chunked.clone(),
            // Hyper's own refusal (no body).
            "connection: close",
        ),
    ];
    for (framing, payload, why) in cases {
        let request = post_head("/mcp", &host, &framing) + &payload;
        let (reply, closed) = raw(&server, &request).await;
        assert!(reply.starts_with("HTTP/1.1 400"), "{framing:?}: {reply}");
        assert!(reply.contains(why), "{framing:?}: {reply}");
        assert!(
            closed,
            "{framing:?}: the connection stayed open after {reply}"
        );
    }
    // Either framing alone is served.
    for (framing, payload) in [
        ("Transfer-Encoding: chunked\r\n".to_owned(), chunked),
        (format!("Content-Length: {}\r\n", body.len()), body),
    ] {
        let request =
            post_head("/mcp", &host, &(framing.clone() + "Connection: close\r\n")) + &payload;
        let (reply, _) = raw(&server, &request).await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{framing:?}: {reply}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_absolute_form_target_is_checked_by_its_own_authority() {
    let server = serve(HttpOptions::default()).await;
    let host = server.local_addr().to_string();
    let body = init_body();
    let framing = format!("Content-Length: {}\r\nConnection: close\r\n", body.len());
    // A foreign authority in the target, a loopback Host header: the target decides.
    let foreign = post_head("http://evil.example/mcp", &host, &framing) + &body;
    let (reply, _) = raw(&server, &foreign).await;
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    assert!(reply.contains("Host header not allowed"), "{reply}");
    // The server's own authority in absolute form is served.
    let own = post_head(&format!("http://{host}/mcp"), &host, &framing) + &body;
    let (reply, _) = raw(&server, &own).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    server.shutdown().await;
}
