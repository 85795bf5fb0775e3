//! Resources, resource templates, prompts and their argument completion: definitions, the
//! handler traits their code implements, and the registry sessions read.

mod defs;
pub(crate) mod json;
mod prompt_args;
mod template;
pub mod visibility;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use async_trait::async_trait;

pub use defs::{
    Completion, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceContents,
    ResourceTemplate, Role,
};
pub(crate) use prompt_args::PromptArguments;
pub(crate) use template::UriPattern;
use visibility::Guarded;

use crate::changes::{Change, ChangeBus};
use crate::{Error, ToolError};

/// A `resources/read` of one URI; `variables` holds what a template's `{vars}` matched.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI asked for.
    pub uri: String,
    /// Template variables by name (empty for a fixed resource).
    pub variables: BTreeMap<String, String>,
    /// The MIME type the resource or template was registered with, if any.
    pub mime_type: Option<String>,
    /// 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key.
    pub input_responses: serde_json::Map<String, serde_json::Value>,
    /// 2026-07-28 MRTR: the state an earlier round returned, verified.
    pub request_state: Option<String>,
    /// The request's context: progress (when the client asked for it), logging, cancellation
    /// (`notifications/cancelled` for this request) and the client's info, as a tool's.
    /// `None` when the request did not come from a client session.
    pub ctx: Option<crate::Context>,
}

/// Reads a resource (or any resource of a template).
///
/// `Err(ToolError::not_found(..))` answers `-32002` (`-32602` in 2026-07-28); another error
/// answers `-32603` with its message.
#[async_trait]
pub trait ResourceHandler: Send + Sync + 'static {
    /// The contents of `request.uri`.
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError>;
}

#[async_trait]
impl<F, Fut> ResourceHandler for F
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
{
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        (self)(request).await
    }
}

#[async_trait]
impl<T: ResourceHandler + ?Sized> ResourceHandler for Arc<T> {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        (**self).read(request).await
    }
}

/// A `prompts/get`: the prompt's name and its (string) arguments, already checked against
/// the prompt's declared arguments.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PromptRequest {
    /// The prompt.
    pub name: String,
    /// Its arguments.
    pub arguments: BTreeMap<String, String>,
    /// 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key.
    pub input_responses: serde_json::Map<String, serde_json::Value>,
    /// 2026-07-28 MRTR: the state an earlier round returned, verified.
    pub request_state: Option<String>,
    /// The request's context: progress (when the client asked for it), logging, cancellation
    /// (`notifications/cancelled` for this request) and the client's info, as a tool's.
    /// `None` when the request did not come from a client session.
    pub ctx: Option<crate::Context>,
}

/// Renders a prompt. An error answers `-32603` with its message.
#[async_trait]
pub trait PromptHandler: Send + Sync + 'static {
    /// The prompt's messages for `request`.
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError>;
}

#[async_trait]
impl<F, Fut> PromptHandler for F
where
    F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
{
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        (self)(request).await
    }
}

#[async_trait]
impl<T: PromptHandler + ?Sized> PromptHandler for Arc<T> {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        (**self).get(request).await
    }
}

/// What `completion/complete` is for: a prompt (by name) or a resource template (by its URI
/// template).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reference {
    /// `ref/prompt`.
    Prompt(String),
    /// `ref/resource`.
    ResourceTemplate(String),
}

/// One `completion/complete`: the argument being typed, what is typed so far, and the values
/// of arguments already chosen.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt or template.
    pub reference: Reference,
    /// The argument (or template variable) name.
    pub argument: String,
    /// Its partial value.
    pub value: String,
    /// Other arguments already resolved (`context.arguments`).
    pub context: BTreeMap<String, String>,
    /// The request's context: progress (when the client asked for it), logging, cancellation
    /// (`notifications/cancelled` for this request) and the client's info, as a tool's.
    /// `None` when the request did not come from a client session.
    pub ctx: Option<crate::Context>,
}

/// Suggests values for the arguments of one prompt or template.
#[async_trait]
pub trait Completer: Send + Sync + 'static {
    /// Suggestions for `request.argument`, best first.
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError>;
}

#[async_trait]
impl<F, Fut> Completer for F
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ToolError>> + Send + 'static,
{
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        (self)(request).await
    }
}

#[async_trait]
impl<T: Completer + ?Sized> Completer for Arc<T> {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        (**self).complete(request).await
    }
}

pub(crate) struct RegisteredResource {
    /// Which registration this is: a definition removed and added again (redefined) is a
    /// change even under the same name.
    pub(crate) generation: u64,
    pub(crate) def: Resource,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

/// What `resources/read` found for a URI.
pub(crate) struct FoundResource {
    /// The resource or template that serves it, as visibility sees it.
    pub(crate) item: visibility::CatalogItem,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) mime_type: Option<String>,
}

impl FoundResource {
    fn fixed(resource: &RegisteredResource) -> Self {
        FoundResource {
            item: resource.def.item(),
            handler: resource.handler.clone(),
            variables: BTreeMap::new(),
            mime_type: resource.def.mime_type.clone(),
        }
    }

    fn templated(template: &RegisteredTemplate, uri: &str) -> Option<Self> {
        let variables = template.pattern.matches(uri)?;
        Some(FoundResource {
            item: template.def.item(),
            handler: template.handler.clone(),
            variables,
            mime_type: template.def.mime_type.clone(),
        })
    }
}

pub(crate) struct RegisteredTemplate {
    /// Which registration this is: a definition removed and added again (redefined) is a
    /// change even under the same name.
    pub(crate) generation: u64,
    pub(crate) def: ResourceTemplate,
    pub(crate) pattern: UriPattern,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct RegisteredPrompt {
    /// Which registration this is: a definition removed and added again (redefined) is a
    /// change even under the same name.
    pub(crate) generation: u64,
    pub(crate) def: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
    /// Its `argumentsSchema`, compiled.
    pub(crate) checks: Option<PromptArguments>,
}

/// Which list a change touched.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Resources,
    Prompts,
}

type Map<T> = RwLock<Arc<BTreeMap<String, Arc<T>>>>;

/// A number no registration had before (see `RegisteredResource::generation`).
pub(crate) fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Copy-on-write maps like the tool registry; changes are published for `list_changed`.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) resources: Map<RegisteredResource>,
    pub(crate) templates: Map<RegisteredTemplate>,
    pub(crate) prompts: Map<RegisteredPrompt>,
    completers: RwLock<HashMap<Reference, Arc<dyn Completer>>>,
    /// The skills served (`skill://` resources, `skills/list`).
    pub(crate) skills: crate::skills::Skills,
    /// MCP Apps views (`ui://` resources).
    pub(crate) views: crate::apps::Views,
    /// Set once the server is built: registrations before that announce nothing.
    changes: OnceLock<Arc<dyn ChangeBus>>,
    /// Some definition requires scopes or tags (set for good once one does): lists and
    /// lookups are then screened per request.
    guarded: AtomicBool,
    /// The server's own rule of who sees what, asked after the requirements are met.
    policy: RwLock<Option<Arc<dyn visibility::VisibilityPolicy>>>,
    has_policy: AtomicBool,
}

fn insert<T>(map: &Map<T>, key: String, value: T, what: &'static str) -> Result<(), Error> {
    let mut guard = map.write().unwrap_or_else(|e| e.into_inner());
    if guard.contains_key(&key) {
        return Err(Error::InvalidDefinition {
            kind: what,
            message: format!("a {what} {key:?} is already registered"),
        });
    }
    Arc::make_mut(&mut guard).insert(key, Arc::new(value));
    Ok(())
}

fn remove<T>(map: &Map<T>, key: &str) -> bool {
    let mut guard = map.write().unwrap_or_else(|e| e.into_inner());
    guard.contains_key(key) && Arc::make_mut(&mut guard).remove(key).is_some()
}

pub(crate) fn snapshot<T>(map: &Map<T>) -> Arc<BTreeMap<String, Arc<T>>> {
    map.read().unwrap_or_else(|e| e.into_inner()).clone()
}

impl Catalog {
    fn changed(&self, kind: Kind) {
        self.publish(match kind {
            Kind::Resources => Change::ResourcesListChanged,
            Kind::Prompts => Change::PromptsListChanged,
        });
    }

    fn publish(&self, change: Change) {
        if let Some(bus) = self.changes.get() {
            bus.publish(change);
        }
    }

    /// From now on, changes are published on `bus`.
    pub(crate) fn announce_to(&self, bus: Arc<dyn ChangeBus>) {
        let _ = self.changes.set(bus);
    }

    /// A definition that requires scopes or tags was registered: screen from now on.
    pub(crate) fn note_guarded(&self, definition: &impl Guarded) {
        if definition.is_guarded() {
            self.guarded.store(true, Ordering::Release);
        }
    }

    /// Whether any request may be shown less than the whole catalog (on every call's path:
    /// two atomic loads, no lock).
    pub(crate) fn screens(&self) -> bool {
        self.guarded.load(Ordering::Acquire) || self.has_policy.load(Ordering::Acquire)
    }

    /// The server's visibility rule, if it set one.
    pub(crate) fn policy(&self) -> Option<Arc<dyn visibility::VisibilityPolicy>> {
        self.policy
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sets (or, with `None`, drops) the server's visibility rule.
    pub(crate) fn set_policy(&self, policy: Option<Arc<dyn visibility::VisibilityPolicy>>) {
        let mut current = self.policy.write().unwrap_or_else(|e| e.into_inner());
        self.has_policy.store(policy.is_some(), Ordering::Release);
        *current = policy;
    }

    pub(crate) fn add_resource(
        &self,
        def: Resource,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        if def.uri.is_empty() || def.name.is_empty() {
            return Err(Error::InvalidDefinition {
                kind: "resource",
                message: "a resource needs a uri and a name".into(),
            });
        }
        if self.skills.snapshot().file(&def.uri).is_some() || self.views.get(&def.uri).is_some() {
            return Err(Error::InvalidDefinition {
                kind: "resource",
                message: format!("{} is already served as a skill's file", def.uri),
            });
        }
        self.note_guarded(&def);
        insert(
            &self.resources,
            def.uri.clone(),
            RegisteredResource {
                def,
                handler,
                generation: next_generation(),
            },
            "resource",
        )?;
        self.changed(Kind::Resources);
        Ok(())
    }

    pub(crate) fn add_template(
        &self,
        def: ResourceTemplate,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        if def.name.is_empty() {
            return Err(Error::InvalidDefinition {
                kind: "resource template",
                message: "a resource template needs a name".into(),
            });
        }
        let pattern =
            UriPattern::parse(&def.uri_template).map_err(|why| Error::InvalidDefinition {
                kind: "resource template",
                message: format!("invalid URI template {:?}: {why}", def.uri_template),
            })?;
        self.note_guarded(&def);
        insert(
            &self.templates,
            def.uri_template.clone(),
            RegisteredTemplate {
                generation: next_generation(),
                def,
                pattern,
                handler,
            },
            "resource template",
        )?;
        self.changed(Kind::Resources);
        Ok(())
    }

    pub(crate) fn add_prompt(
        &self,
        mut def: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Result<(), Error> {
        if def.name.is_empty() {
            return Err(Error::InvalidDefinition {
                kind: "prompt",
                message: "a prompt needs a name".into(),
            });
        }
        let checks = PromptArguments::compile(&mut def)?;
        self.note_guarded(&def);
        insert(
            &self.prompts,
            def.name.clone(),
            RegisteredPrompt {
                generation: next_generation(),
                def,
                handler,
                checks,
            },
            "prompt",
        )?;
        self.changed(Kind::Prompts);
        Ok(())
    }

    pub(crate) fn set_completer(
        &self,
        reference: Reference,
        completer: Arc<dyn Completer>,
    ) -> Result<(), Error> {
        let known = match &reference {
            Reference::Prompt(name) => snapshot(&self.prompts).contains_key(name),
            Reference::ResourceTemplate(uri) => snapshot(&self.templates).contains_key(uri),
        };
        if !known {
            return Err(Error::InvalidDefinition {
                kind: "completion",
                message: format!("no {reference:?} is registered to complete"),
            });
        }
        self.completers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(reference, completer);
        Ok(())
    }

    pub(crate) fn completer(&self, reference: &Reference) -> Option<Arc<dyn Completer>> {
        self.completers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(reference)
            .cloned()
    }

    /// Whether `completion/complete` has anything to offer: a completer, or a prompt argument
    /// with an `enum`.
    pub(crate) fn remove_completer(&self, reference: &Reference) {
        self.completers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(reference);
    }

    pub(crate) fn has_completers(&self) -> bool {
        !self
            .completers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
            || snapshot(&self.prompts).values().any(|p| {
                p.checks
                    .as_ref()
                    .is_some_and(PromptArguments::completes_any)
            })
    }

    pub(crate) fn remove_resource(&self, uri: &str) -> bool {
        let removed = remove(&self.resources, uri) || self.views.remove(uri);
        if removed {
            self.changed(Kind::Resources);
        }
        removed
    }

    pub(crate) fn remove_template(&self, uri_template: &str) -> bool {
        let removed = remove(&self.templates, uri_template);
        if removed {
            self.completers
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&Reference::ResourceTemplate(uri_template.to_owned()));
            self.changed(Kind::Resources);
        }
        removed
    }

    pub(crate) fn remove_prompt(&self, name: &str) -> bool {
        let removed = remove(&self.prompts, name);
        if removed {
            self.completers
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&Reference::Prompt(name.to_owned()));
            self.changed(Kind::Prompts);
        }
        removed
    }

    pub(crate) fn has_resources(&self) -> bool {
        !snapshot(&self.resources).is_empty()
            || !snapshot(&self.templates).is_empty()
            || self.has_skills()
            || self.has_views()
    }

    /// Serves an MCP Apps view.
    pub(crate) fn add_view(&self, view: crate::apps::UiResource) -> Result<(), Error> {
        if self.is_resource(view.uri()) {
            return Err(Error::InvalidDefinition {
                kind: "ui resource",
                message: format!("{} is already registered as a resource", view.uri()),
            });
        }
        self.note_guarded(view.resource());
        self.views.add(view)?;
        self.changed(Kind::Resources);
        Ok(())
    }

    pub(crate) fn has_views(&self) -> bool {
        !self.views.is_empty()
    }

    pub(crate) fn has_skills(&self) -> bool {
        !self.skills.snapshot().is_empty()
    }

    /// Whether `uri` is a registered resource's (a skill's file may not take it).
    fn is_resource(&self, uri: &str) -> bool {
        snapshot(&self.resources).contains_key(uri)
    }

    pub(crate) fn add_skill(&self, skill: crate::skills::Skill) -> Result<(), Error> {
        self.skills.add(skill, &|uri| self.is_resource(uri))?;
        self.changed(Kind::Resources);
        Ok(())
    }

    pub(crate) fn remove_skill(&self, uri_or_path: &str) -> bool {
        let before = self.skills.snapshot();
        let removed = self.skills.remove(uri_or_path);
        if removed {
            self.changed(Kind::Resources);
            // Its files' subscribers hear they are gone, as after a reload.
            for uri in before.files_gone_from(&self.skills.snapshot()) {
                self.resource_updated(&uri);
            }
        }
        removed
    }

    /// Loads (or reloads) the skills under `root`: how many it has.
    pub(crate) fn load_skills(&self, root: &std::path::Path) -> Result<usize, Error> {
        let reloaded = self.skills.load_dir(root, &|uri| self.is_resource(uri))?;
        if reloaded.changed {
            self.changed(Kind::Resources);
        }
        for uri in &reloaded.updated {
            self.resource_updated(uri);
        }
        Ok(reloaded.skills)
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !snapshot(&self.prompts).is_empty()
    }

    /// The handler for `uri`: its fixed resource, else the first template that matches.
    /// The handler of `uri`, its template's variables and its registered MIME type.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<FoundResource> {
        if let Some(resource) = snapshot(&self.resources).get(uri) {
            return Some(FoundResource::fixed(resource));
        }
        snapshot(&self.templates)
            .values()
            .find_map(|template| FoundResource::templated(template, uri))
    }

    /// Everything that could serve `uri`, in the order reads try them: its fixed resource,
    /// then each template that matches (a request that may not see the first is served by
    /// the next it may see).
    pub(crate) fn resources_serving(&self, uri: &str) -> Vec<FoundResource> {
        let fixed = snapshot(&self.resources)
            .get(uri)
            .map(|resource| FoundResource::fixed(resource));
        let templates = snapshot(&self.templates);
        let matching = templates
            .values()
            .filter_map(|template| FoundResource::templated(template, uri));
        fixed.into_iter().chain(matching).collect()
    }

    pub(crate) fn resource_updated(&self, uri: &str) {
        self.publish(Change::ResourceUpdated {
            uri: Arc::from(uri),
        });
    }
}
