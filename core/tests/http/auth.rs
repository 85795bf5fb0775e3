//! Bearer tokens: required, checked, and bound to the session.

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use toolwire::transport::http::{AuthRejection, BearerAuth, HttpOptions, TokenInfo};

use super::support::*;

fn token_check(token: &str) -> Result<TokenInfo, AuthRejection> {
    match token {
        "alice-token" => Ok(TokenInfo::new(Some("alice".into()), vec!["tools".into()])),
        "bob-token" => Ok(TokenInfo::new(Some("bob".into()), vec!["tools".into()])),
        "reader-token" => Err(AuthRejection::insufficient_scope("tools")),
        _ => Err(AuthRejection::invalid_token("unknown token")),
    }
}

#[tokio::test]
async fn bearer_tokens_are_required_checked_and_bound_to_the_session() {
    let mut options = HttpOptions::default();
    options.auth = Some(BearerAuth::new(token_check, "https://auth.example.com"));
    let server = serve(options).await;
    let mut conn = Conn::open(&server).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let base = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let missing = conn.send(Method::POST, &base, &init).await;
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let challenge = header(missing.headers(), "www-authenticate").expect("a challenge");
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.local_addr()
    );
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\"")
    );

    let with = |token: &'static str| {
        let mut headers = base.to_vec();
        headers.push(("authorization", token));
        headers
    };
    let bad = conn.send(Method::POST, &with("Bearer forged"), &init).await;
    assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
    assert!(
        header(bad.headers(), "www-authenticate")
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    let scoped = conn
        .send(Method::POST, &with("Bearer reader-token"), &init)
        .await;
    assert_eq!(scoped.status(), StatusCode::FORBIDDEN);
    assert!(
        header(scoped.headers(), "www-authenticate")
            .unwrap()
            .contains("scope=\"tools\"")
    );

    let opened = conn
        .send(Method::POST, &with("Bearer alice-token"), &init)
        .await;
    assert_eq!(opened.status(), StatusCode::OK);
    let session = header(opened.headers(), "mcp-session-id").unwrap();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let mut as_alice = with("Bearer alice-token");
    as_alice.push(("mcp-session-id", &session));
    assert_eq!(
        conn.send(Method::POST, &as_alice, &ping).await.status(),
        StatusCode::OK
    );
    // Bob's valid token does not open Alice's session.
    let mut as_bob = with("Bearer bob-token");
    as_bob.push(("mcp-session-id", &session));
    assert_eq!(
        conn.send(Method::POST, &as_bob, &ping).await.status(),
        StatusCode::NOT_FOUND
    );

    // The metadata needs no token.
    let metadata = conn.send(Method::GET, &[], "").await;
    assert_eq!(
        metadata.status(),
        StatusCode::UNAUTHORIZED,
        "the MCP path itself still needs one"
    );
    let stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let request = Request::get("/.well-known/oauth-protected-resource/mcp")
        .header("host", server.local_addr().to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let document = json_body(sender.send_request(request).await.unwrap()).await;
    assert_eq!(
        document["authorization_servers"],
        json!(["https://auth.example.com"])
    );
    assert_eq!(
        document["resource"],
        format!("http://{}/mcp", server.local_addr())
    );
    server.shutdown().await;
}
