//! Who sees what, decided by Kotlin or Swift: the items of a request and who asks, as records;
//! the rule as a foreign trait, asked on a pool thread (it may block).

use std::sync::Arc;

use toolwire::catalog::visibility::{
    CatalogItem as CoreItem, ItemKind as CoreItemKind, Viewer as CoreViewer,
};

use crate::context::ClientInfo;
use crate::errors::ToolwireError;
use crate::runtime::runtime;

/// What kind of catalog item a visibility decision is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A resource with a fixed URI.
    Resource,
    /// A resource template.
    ResourceTemplate,
    /// A prompt.
    Prompt,
}

/// A tool, resource, resource template or prompt, as a visibility rule sees it.
#[derive(Clone, Debug, uniffi::Record)]
pub struct CatalogItem {
    /// What it is.
    pub kind: ItemKind,
    /// A tool's or prompt's name, a resource's URI, a template's URI template.
    pub name: String,
    /// The scopes its definition requires.
    pub required_scopes: Vec<String>,
    /// The tags its definition requires.
    pub required_tags: Vec<String>,
}

/// Who a request comes from, as a visibility rule sees it: over HTTP with a token validator,
/// the token's subject, scopes and tags; the client's info and the request's version.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Viewer {
    /// The token's subject.
    pub subject: Option<String>,
    /// The token's scopes.
    pub scopes: Vec<String>,
    /// The principal's tags.
    pub tags: Vec<String>,
    /// The client's `clientInfo`.
    pub client_info: Option<ClientInfo>,
    /// The protocol version the request speaks, e.g. `2025-11-25`.
    pub protocol_version: Option<String>,
}

/// Decides per request who sees which tools, resources, templates and prompts, beyond their
/// `requiredScopes` / `requiredTags`. Asked on a pool thread, for each item the requirements
/// allowed; a rule that throws hides everything it was asked about in that request.
#[uniffi::export(with_foreign)]
pub trait VisibilityRule: Send + Sync {
    /// Whether `viewer` sees `item`. An error (any exception) hides the request's items.
    fn visible(&self, item: CatalogItem, viewer: Viewer) -> Result<bool, ToolwireError>;
}

pub(crate) struct ForeignRule(pub(crate) Arc<dyn VisibilityRule>);

#[async_trait::async_trait]
impl toolwire::VisibilityPolicy for ForeignRule {
    async fn visible(&self, viewer: &CoreViewer, items: &[CoreItem]) -> Vec<bool> {
        let rule = self.0.clone();
        let viewer = Viewer {
            subject: viewer.subject.clone(),
            scopes: viewer.scopes.clone(),
            tags: viewer.tags.clone(),
            client_info: viewer.client_info.as_ref().map(ClientInfo::from_core),
            protocol_version: viewer.protocol_version.map(|v| v.as_str().to_owned()),
        };
        let items: Vec<CatalogItem> = items
            .iter()
            .map(|item| CatalogItem {
                kind: match item.kind {
                    CoreItemKind::Tool => ItemKind::Tool,
                    CoreItemKind::Resource => ItemKind::Resource,
                    CoreItemKind::ResourceTemplate => ItemKind::ResourceTemplate,
                    // Core's kinds are non-exhaustive: a kind this binding does not know yet
                    // is shown to the rule as the nearest, a prompt being the last added.
                    _ => ItemKind::Prompt,
                },
                name: item.name.clone(),
                required_scopes: item.required_scopes.clone(),
                required_tags: item.required_tags.clone(),
            })
            .collect();
        let asked = runtime().spawn_blocking(move || {
            items
                .into_iter()
                .map(|item| rule.visible(item, viewer.clone()))
                .collect::<Result<Vec<bool>, ToolwireError>>()
        });
        match asked.await {
            Ok(Ok(verdicts)) => verdicts,
            Ok(Err(err)) => {
                tracing::warn!(%err, "the visibility rule failed: its items are hidden");
                Vec::new()
            }
            Err(err) => {
                tracing::warn!(%err, "the visibility rule failed: its items are hidden");
                Vec::new()
            }
        }
    }
}
