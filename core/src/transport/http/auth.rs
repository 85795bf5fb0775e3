//! Bearer tokens: a validator of yours decides; we answer 401/403 with the challenge that
//! points clients at the protected-resource metadata (RFC 9728).

use std::sync::Arc;

use async_trait::async_trait;

/// What a valid token says about its holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenInfo {
    /// Who the token was issued to. A session is bound to the subject that opened it: another
    /// subject presenting its id gets 404.
    pub subject: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

impl TokenInfo {
    /// A token of `subject` with `scopes`.
    pub fn new(subject: Option<String>, scopes: Vec<String>) -> Self {
        TokenInfo { subject, scopes }
    }
}

/// Why a token was refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthRejection {
    /// The token is valid but lacks a scope (403 `insufficient_scope`); otherwise it is
    /// missing, invalid or expired (401 `invalid_token`).
    pub insufficient_scope: bool,
    /// The scopes the request needs, for the challenge's `scope`.
    pub scope: Option<String>,
    /// A human-readable reason, for `error_description` (never put secrets here).
    pub description: Option<String>,
}

impl AuthRejection {
    /// A missing, invalid or expired token (401).
    pub fn invalid_token(description: impl Into<String>) -> Self {
        AuthRejection {
            insufficient_scope: false,
            scope: None,
            description: Some(description.into()),
        }
    }

    /// A valid token without the scopes `scope` (403).
    pub fn insufficient_scope(scope: impl Into<String>) -> Self {
        AuthRejection {
            insufficient_scope: true,
            scope: Some(scope.into()),
            description: None,
        }
    }
}

/// Checks a bearer token (signature, expiry, and that its audience is this server).
#[async_trait]
pub trait TokenValidator: Send + Sync + 'static {
    /// `Ok` with what the token grants, or why it is refused.
    async fn validate(&self, token: &str) -> Result<TokenInfo, AuthRejection>;
}

#[async_trait]
impl<F> TokenValidator for F
where
    F: Fn(&str) -> Result<TokenInfo, AuthRejection> + Send + Sync + 'static,
{
    async fn validate(&self, token: &str) -> Result<TokenInfo, AuthRejection> {
        self(token)
    }
}

/// Bearer-token protection of the endpoint, and the metadata clients discover it from.
#[derive(Clone)]
#[non_exhaustive]
pub struct BearerAuth {
    /// Decides on each request's token.
    pub validator: Arc<dyn TokenValidator>,
    /// The authorization servers that issue tokens for this server (at least one).
    pub authorization_servers: Vec<String>,
    /// The scopes this server knows, for the metadata.
    pub scopes_supported: Vec<String>,
    /// This server's canonical URL (the tokens' audience), e.g. `https://mcp.example.com/mcp`.
    /// Default: `http://<Host header><path>`.
    pub resource: Option<String>,
}

impl BearerAuth {
    /// Protection by `validator`, with tokens from `authorization_server`.
    pub fn new(validator: impl TokenValidator, authorization_server: impl Into<String>) -> Self {
        BearerAuth {
            validator: Arc::new(validator),
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            resource: None,
        }
    }
}
