//! The test of docs/guides/auth.md, which includes the part between the markers.

#[path = "../examples/notes_auth.rs"]
#[allow(dead_code)] // its `main` is the example's
mod notes_auth;

// --8<-- [start:test]
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// One request on a connection of its own (hyper's client here; any HTTP client will do).
async fn send(
    addr: std::net::SocketAddr,
    request: Request<Full<Bytes>>,
) -> Result<Response<Bytes>, Failure> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut client, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let (head, body) = client.send_request(request).await?.into_parts();
    Ok(Response::from_parts(head, body.collect().await?.to_bytes()))
}

#[tokio::test]
async fn a_bearer_token_guards_the_endpoint() -> Result<(), Failure> {
    let http = notes_auth::notes_auth_server()?
        .serve_http("127.0.0.1:0", notes_auth::auth_options())
        .await?;
    let addr = http.local_addr();
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let initialize =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).to_string();
    let post = |token: Option<&str>| {
        let mut request = Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request.body(Full::new(Bytes::from(initialize.clone())))
    };
    let challenge = |response: &Response<Bytes>| {
        let value = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok());
        value.unwrap_or_default().to_owned()
    };

    // No token: 401, and the challenge says where the metadata is.
    let refused = send(addr, post(None)?).await?;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge_text = challenge(&refused);
    let metadata_url = challenge_text
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|s| s.split('"').next());
    let metadata_path = metadata_url
        .and_then(|url| url.strip_prefix("http://127.0.0.1"))
        .expect("a metadata URL");
    // The protected-resource metadata (RFC 9728) names the authorization server.
    let get = Request::get(metadata_path)
        .header("host", "127.0.0.1")
        .body(Full::new(Bytes::new()))?;
    let metadata: Value = serde_json::from_slice(send(addr, get).await?.body())?;
    assert_eq!(
        metadata["authorization_servers"],
        json!(["https://auth.example.com"])
    );

    // A token without the scope: 403, naming it.
    let guest = send(addr, post(Some("secret-guest"))?).await?;
    assert_eq!(guest.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&guest).contains("scope=\"notes\""));

    // A good token: served.
    let ada = send(addr, post(Some("secret-ada"))?).await?;
    assert_eq!(ada.status(), StatusCode::OK);
    let answer: Value = serde_json::from_slice(ada.body())?;
    assert_eq!(answer["result"]["serverInfo"]["name"], "notes");
    http.shutdown().await;
    Ok(())
}
// --8<-- [end:test]
