//! The Rust server of docs/guides/auth.md (which includes the part between the markers; the
//! test of it is core/tests/guide_auth.rs): `cargo run -p toolwire --example notes_auth`.

// --8<-- [start:server]
use serde_json::Value;
use toolwire::transport::http::{AuthRejection, BearerAuth, HttpOptions, TokenInfo};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

/// What your authorization server issued (in a real app: verify a JWT, or ask the server).
pub fn check_token(token: &str) -> Result<TokenInfo, AuthRejection> {
    let (subject, scopes): (&str, &[&str]) = match token {
        "secret-ada" => ("ada", &["notes"]),
        "secret-guest" => ("guest", &[]),
        _ => return Err(AuthRejection::invalid_token("unknown token")), // 401
    };
    if !scopes.contains(&"notes") {
        return Err(AuthRejection::insufficient_scope("notes")); // 403, naming it
    }
    // The subject is the caller's principal (middleware, per-principal limits).
    let scopes = scopes.iter().map(|s| s.to_string()).collect();
    Ok(TokenInfo::new(Some(subject.to_owned()), scopes))
}

pub fn auth_options() -> HttpOptions {
    let mut options = HttpOptions::default();
    options.auth = Some(BearerAuth::new(check_token, "https://auth.example.com"));
    options
}

pub fn notes_auth_server() -> Result<Server, toolwire::Error> {
    Server::builder("notes", "1.0.0")
        .tool(
            Tool::new("count_notes"),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("3")) },
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), toolwire::Error> {
    let server = notes_auth_server()?;
    server
        .serve_http("127.0.0.1:8000", auth_options())
        .await?
        .wait()
        .await;
    Ok(())
}
// --8<-- [end:server]
