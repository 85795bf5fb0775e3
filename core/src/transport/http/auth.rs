//! Bearer tokens: a validator of yours decides; we answer 401/403 with the challenge that
//! points clients at the protected-resource metadata (RFC 9728).

use std::sync::Arc;

use async_trait::async_trait;
use hyper::StatusCode;
use hyper::header::{self, HeaderMap};
use serde_json::{Value, json};

use super::headers::text_header;
use super::replies::{Reply, challenge_reply, json_reply, quoted};
use crate::catalog::json::{JsonCallback, ViaJson};
use crate::catalog::visibility::Viewer;

/// What a valid token says about its holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenInfo {
    /// Who the token was issued to. A session is bound to the subject that opened it: another
    /// subject presenting its id gets 404.
    pub subject: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// What the holder is (roles, groups, plans): matched against the tags a tool, resource
    /// or prompt requires to be seen.
    pub tags: Vec<String>,
}

impl TokenInfo {
    /// A token of `subject` with `scopes`.
    pub fn new(subject: Option<String>, scopes: Vec<String>) -> Self {
        TokenInfo {
            subject,
            scopes,
            tags: Vec::new(),
        }
    }

    /// The holder's tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
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

/// Where clients find the protected-resource metadata (RFC 9728), before the endpoint's path.
pub(super) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The endpoint's side of bearer tokens: checking one, and the metadata that points clients at
/// the authorization servers.
impl BearerAuth {
    /// Who the token says the client is, or the 401/403 with its challenge.
    pub(super) async fn authorize(
        &self,
        headers: &HeaderMap,
        host: Option<&str>,
        path: &str,
    ) -> Result<Viewer, Reply> {
        let token = text_header(headers, &header::AUTHORIZATION).and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim())
                .filter(|t| !t.is_empty())
        });
        let metadata = self.metadata_url(host, path);
        let Some(token) = token else {
            let challenge = format!("Bearer resource_metadata=\"{metadata}\"");
            return Err(challenge_reply(
                StatusCode::UNAUTHORIZED,
                &challenge,
                "Unauthorized: a bearer token is required",
            ));
        };
        match self.validator.validate(token).await {
            Ok(info) => Ok(Viewer::new(info.subject, info.scopes, info.tags)),
            Err(rejection) => {
                let (status, error) = if rejection.insufficient_scope {
                    (StatusCode::FORBIDDEN, "insufficient_scope")
                } else {
                    (StatusCode::UNAUTHORIZED, "invalid_token")
                };
                let mut challenge = format!("Bearer error=\"{error}\"");
                if let Some(scope) = &rejection.scope {
                    challenge.push_str(&format!(", scope=\"{}\"", quoted(scope)));
                }
                challenge.push_str(&format!(", resource_metadata=\"{metadata}\""));
                if let Some(description) = &rejection.description {
                    challenge.push_str(&format!(", error_description=\"{}\"", quoted(description)));
                }
                let message = if rejection.insufficient_scope {
                    "Forbidden: the token lacks a required scope"
                } else {
                    "Unauthorized: the token is invalid or expired"
                };
                Err(challenge_reply(status, &challenge, message))
            }
        }
    }

    /// This server's canonical URL: the configured one, or `http://<Host><path>`.
    fn resource_url(&self, host: Option<&str>, path: &str) -> String {
        self.resource
            .clone()
            .unwrap_or_else(|| format!("http://{}{path}", host.unwrap_or("localhost")))
    }

    fn metadata_url(&self, host: Option<&str>, path: &str) -> String {
        let resource = self.resource_url(host, path);
        // Insert the well-known prefix between the origin and the path (RFC 9728 §3.1).
        let (origin, path) = match resource.find("://") {
            Some(scheme_end) => match resource[scheme_end + 3..].find('/') {
                Some(slash) => resource.split_at(scheme_end + 3 + slash),
                None => (resource.as_str(), ""),
            },
            None => (resource.as_str(), ""),
        };
        quoted(&format!("{origin}{METADATA_PATH}{path}"))
    }

    /// The protected-resource metadata document (RFC 9728).
    pub(super) fn resource_metadata(&self, host: Option<&str>, path: &str) -> Reply {
        let mut document = json!({
            "resource": self.resource_url(host, path),
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            document["scopes_supported"] = json!(self.scopes_supported);
        }
        json_reply(StatusCode::OK, document.to_string())
    }
}

/// A host's token check, answered as [`ViaJson`] documents.
#[async_trait]
impl<C: JsonCallback> TokenValidator for ViaJson<C> {
    async fn validate(&self, token: &str) -> Result<TokenInfo, AuthRejection> {
        let verdict = match self.answer(json!({"token": token}), None).await {
            Ok(verdict) => verdict,
            Err(err) => {
                tracing::warn!(error = %err, "the token validator failed; refusing the token");
                return Err(AuthRejection::invalid_token(
                    "the token could not be validated",
                ));
            }
        };
        match verdict {
            Value::Object(map) => match map.get("insufficientScope") {
                Some(scope) => Err(AuthRejection::insufficient_scope(
                    scope.as_str().unwrap_or_default(),
                )),
                None => {
                    let strings = |key: &str| -> Vec<String> {
                        map.get(key)
                            .and_then(Value::as_array)
                            .map(|s| {
                                s.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect()
                            })
                            .unwrap_or_default()
                    };
                    let subject = map.get("subject").and_then(Value::as_str);
                    Ok(
                        TokenInfo::new(subject.map(str::to_owned), strings("scopes"))
                            .tags(strings("tags")),
                    )
                }
            },
            _ => Err(AuthRejection::invalid_token("invalid token")),
        }
    }
}
