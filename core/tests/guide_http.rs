//! The test of docs/guides/http.md, which includes the part between the markers.

#[path = "../examples/notes_http.rs"]
#[allow(dead_code)] // its `main` is the example's
mod notes_http;

// --8<-- [start:test]
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use toolwire::transport::http::{HttpOptions, ResponseMode};

#[tokio::test]
async fn any_http_client_speaks_to_it() -> Result<(), Box<dyn std::error::Error>> {
    // Port 0: a free one. ResponseMode::Json: every answer one JSON body (by default one that is
    // not ready at once streams as SSE, with the call's progress and logs before it).
    let mut options = HttpOptions::default();
    options.response_mode = ResponseMode::Json;
    let http = notes_http::notes_http_server()?
        .serve_http("127.0.0.1:0", options)
        .await?;
    // hyper's client here; any HTTP client will do.
    let stream = tokio::net::TcpStream::connect(http.local_addr()).await?;
    let (mut client, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let mut post = async |message: Value, session: Option<&str>| {
        let mut request = Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let body = Full::new(Bytes::from(message.to_string()));
        let response = client.send_request(request.body(body)?).await?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().map(str::to_owned));
        let (status, body) = (
            response.status(),
            response.into_body().collect().await?.to_bytes(),
        );
        let answer: Value = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body)?
        };
        Ok::<_, Box<dyn std::error::Error>>((status, session.transpose()?, answer))
    };
    let client_info = json!({"name": "hyper", "version": "1"});
    let params =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info});
    let (_, session, init) = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
        None,
    )
    .await?;
    assert_eq!(init["result"]["serverInfo"]["name"], "notes");
    let session = session.expect("the session the server opened");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(initialized, Some(&session)).await?.0, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add_note", "arguments": {"text": "buy milk"}}});
    let (_, _, answer) = post(call, Some(&session)).await?;
    assert_eq!(answer["result"]["content"][0]["text"], "1 notes");
    http.shutdown().await;
    Ok(())
}
// --8<-- [end:test]
