//! Who sees what: the scopes and tags a definition requires, matched against the viewer's, and
//! a predicate of the server's that decides further, per request.
//!
//! A hidden item is absent from its list and answers as unknown when called, read, rendered or
//! completed: the same answer an item that does not exist gets, so nothing leaks its existence.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::json::{JsonCallback, ViaJson};
use crate::protocol::{Implementation, ProtocolVersion};

/// What kind of catalog item a visibility decision is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool (`tools/list`, `tools/call`).
    Tool,
    /// A resource with a fixed URI (`resources/list`, `resources/read`).
    Resource,
    /// A resource template (`resources/templates/list`, reads of URIs it matches, completion).
    ResourceTemplate,
    /// A prompt (`prompts/list`, `prompts/get`, completion).
    Prompt,
}

impl ItemKind {
    /// `"tool"`, `"resource"`, `"resourceTemplate"` or `"prompt"`: its name in every binding.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Resource => "resource",
            ItemKind::ResourceTemplate => "resourceTemplate",
            ItemKind::Prompt => "prompt",
        }
    }
}

/// One catalog item, as a visibility predicate sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogItem {
    /// What it is.
    pub kind: ItemKind,
    /// A tool's or prompt's name, a resource's URI, a template's URI template.
    pub name: String,
    /// The scopes its definition requires (all of them).
    pub required_scopes: Vec<String>,
    /// The tags its definition requires (all of them).
    pub required_tags: Vec<String>,
}

impl CatalogItem {
    /// An item `name` of `kind` that requires nothing.
    pub fn new(kind: ItemKind, name: impl Into<String>) -> Self {
        CatalogItem {
            kind,
            name: name.into(),
            required_scopes: Vec::new(),
            required_tags: Vec::new(),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "kind": self.kind.as_str(),
            "name": self.name,
            "requiredScopes": self.required_scopes,
            "requiredTags": self.required_tags,
        })
    }
}

/// Who one request comes from: what the transport authenticated (over HTTP, the bearer token's
/// subject, scopes and tags) and what the client said of itself.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Viewer {
    /// The token's subject; `None` without authentication.
    pub subject: Option<String>,
    /// The token's scopes.
    pub scopes: Vec<String>,
    /// The principal's tags (roles, groups, plans), as the token validator gave them.
    pub tags: Vec<String>,
    /// The client's `clientInfo` (the request's own in 2026-07-28, else the session's).
    pub client_info: Option<Implementation>,
    /// The protocol version the request speaks.
    pub protocol_version: Option<ProtocolVersion>,
}

impl Viewer {
    /// A viewer `subject` holding `scopes` and `tags`.
    pub fn new(subject: Option<String>, scopes: Vec<String>, tags: Vec<String>) -> Self {
        Viewer {
            subject,
            scopes,
            tags,
            client_info: None,
            protocol_version: None,
        }
    }

    /// Whether it holds every scope and tag in the requirements.
    pub fn meets(&self, required_scopes: &[String], required_tags: &[String]) -> bool {
        required_scopes
            .iter()
            .all(|scope| self.scopes.contains(scope))
            && required_tags.iter().all(|tag| self.tags.contains(tag))
    }

    fn to_json(&self) -> Value {
        json!({
            "subject": self.subject,
            "scopes": self.scopes,
            "tags": self.tags,
            "clientInfo": self.client_info.as_ref().map(|info| json!({"name": info.name, "version": info.version})),
            "protocolVersion": self.protocol_version.map(ProtocolVersion::as_str),
        })
    }
}

/// The server's own rule of who sees what, asked per request after the definitions'
/// requirements were met: the items of a list (or the one item called, read or rendered) at
/// once.
///
/// A plain `Fn(&CatalogItem, &Viewer) -> bool` is one. An answer shorter than `items` hides the items
/// it does not cover (a failing rule fails closed).
#[async_trait]
pub trait VisibilityPolicy: Send + Sync + 'static {
    /// For each of `items`, whether `viewer` sees it.
    async fn visible(&self, viewer: &Viewer, items: &[CatalogItem]) -> Vec<bool>;
}

#[async_trait]
impl<F> VisibilityPolicy for F
where
    F: Fn(&CatalogItem, &Viewer) -> bool + Send + Sync + 'static,
{
    async fn visible(&self, viewer: &Viewer, items: &[CatalogItem]) -> Vec<bool> {
        items.iter().map(|item| self(item, viewer)).collect()
    }
}

/// A host function as the policy: asked `{"viewer": {subject, scopes, tags, clientInfo,
/// protocolVersion}, "items": [{kind, name, requiredScopes, requiredTags}]}`, it answers
/// `{"visible": [bool, …]}` in the items' order. An error, or an answer of another shape,
/// hides every item and is logged.
#[async_trait]
impl<C: JsonCallback> VisibilityPolicy for ViaJson<C> {
    async fn visible(&self, viewer: &Viewer, items: &[CatalogItem]) -> Vec<bool> {
        let request = json!({
            "viewer": viewer.to_json(),
            "items": items.iter().map(CatalogItem::to_json).collect::<Vec<_>>(),
        });
        let answer = match self.answer(request, None).await {
            Ok(answer) => answer,
            Err(err) => {
                tracing::warn!(error = %err.message(), "the visibility rule failed: its items are hidden");
                return Vec::new();
            }
        };
        let verdicts = answer.get("visible").and_then(Value::as_array).map(|v| {
            v.iter()
                .map(|verdict| verdict.as_bool() == Some(true))
                .collect::<Vec<_>>()
        });
        match verdicts {
            Some(verdicts) => verdicts,
            None => {
                tracing::warn!(
                    "the visibility rule answered no \"visible\" list: its items are hidden"
                );
                Vec::new()
            }
        }
    }
}

/// A definition's requirements of who sees it.
pub(crate) trait Guarded {
    /// Its kind and name (URI, URI template), as the policy is told.
    fn identify(&self) -> (ItemKind, &str);
    fn required_scopes(&self) -> &[String];
    fn required_tags(&self) -> &[String];

    fn is_guarded(&self) -> bool {
        !self.required_scopes().is_empty() || !self.required_tags().is_empty()
    }

    fn item(&self) -> CatalogItem {
        let (kind, name) = self.identify();
        CatalogItem {
            kind,
            name: name.to_owned(),
            required_scopes: self.required_scopes().to_vec(),
            required_tags: self.required_tags().to_vec(),
        }
    }
}

macro_rules! guarded {
    ($type:ty, $kind:expr, $name:ident) => {
        impl Guarded for $type {
            fn identify(&self) -> (ItemKind, &str) {
                ($kind, &self.$name)
            }
            fn required_scopes(&self) -> &[String] {
                &self.required_scopes
            }
            fn required_tags(&self) -> &[String] {
                &self.required_tags
            }
        }

        impl $type {
            /// Shown (listed, callable, readable) only to viewers whose token holds every one
            /// of `scopes`; hidden from the rest as if it did not exist.
            pub fn required_scopes<S: Into<String>>(
                mut self,
                scopes: impl IntoIterator<Item = S>,
            ) -> Self {
                self.required_scopes = scopes.into_iter().map(Into::into).collect();
                self
            }

            /// Shown only to viewers holding every one of `tags` (a principal's roles, groups,
            /// plans: what the token validator says it holds).
            pub fn required_tags<S: Into<String>>(
                mut self,
                tags: impl IntoIterator<Item = S>,
            ) -> Self {
                self.required_tags = tags.into_iter().map(Into::into).collect();
                self
            }
        }
    };
}

impl Guarded for CatalogItem {
    fn identify(&self) -> (ItemKind, &str) {
        (self.kind, &self.name)
    }
    fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }
    fn required_tags(&self) -> &[String] {
        &self.required_tags
    }
}

guarded!(super::Resource, ItemKind::Resource, uri);
guarded!(
    super::ResourceTemplate,
    ItemKind::ResourceTemplate,
    uri_template
);
guarded!(super::Prompt, ItemKind::Prompt, name);
guarded!(crate::protocol::Tool, ItemKind::Tool, name);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viewer_meets_requirements_only_with_every_scope_and_tag() {
        let viewer = Viewer::new(
            Some("ann".into()),
            vec!["read".into(), "write".into()],
            vec!["staff".into()],
        );
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(viewer.meets(&[], &[]));
        assert!(viewer.meets(&strings(&["read", "write"]), &strings(&["staff"])));
        assert!(!viewer.meets(&strings(&["read", "admin"]), &[]));
        assert!(!viewer.meets(&[], &strings(&["staff", "beta"])));
        assert!(!Viewer::default().meets(&strings(&["read"]), &[]));
    }

    #[tokio::test]
    async fn a_closure_is_a_policy_and_a_host_answer_of_the_wrong_shape_hides_all() {
        let policy =
            |item: &CatalogItem, viewer: &Viewer| item.name != "secret" || viewer.subject.is_some();
        let items = [
            CatalogItem::new(ItemKind::Tool, "open"),
            CatalogItem::new(ItemKind::Tool, "secret"),
        ];
        assert_eq!(
            policy.visible(&Viewer::default(), &items).await,
            vec![true, false]
        );

        struct Answers(Value);
        #[async_trait]
        impl JsonCallback for Answers {
            async fn call(&self, request: Value) -> Result<Value, crate::ToolError> {
                assert_eq!(request["items"][1]["name"], "secret");
                assert_eq!(request["viewer"]["scopes"], json!([]));
                Ok(self.0.clone())
            }
        }
        let host = ViaJson(Answers(json!({"visible": [true, false]})));
        assert_eq!(
            host.visible(&Viewer::default(), &items).await,
            vec![true, false]
        );
        let wrong = ViaJson(Answers(json!({"shown": [true, true]})));
        assert!(wrong.visible(&Viewer::default(), &items).await.is_empty());
        let failing = ViaJson(Answers(json!({"error": "database down"})));
        assert!(failing.visible(&Viewer::default(), &items).await.is_empty());
    }
}
