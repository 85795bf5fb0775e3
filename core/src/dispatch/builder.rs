//! [`ServerBuilder`]: a server's identity, options and first registrations, checked and
//! assembled in `build`.

use std::sync::Arc;

use serde_json::Value;

use super::middleware::{Chain, Middleware};
use super::modern::{CacheScope, Listeners, ModernStamp, Sealer, StateKeys, modern_server_info};
use super::options::ServerOptions;
use super::server::{Server, ServerInner, share};
use crate::Error;
use crate::catalog::{
    Catalog, Completer, Prompt, PromptHandler, Reference, Resource, ResourceHandler,
    ResourceTemplate,
};
use crate::changes::{ChangeBus, LocalChangeBus};
use crate::handler::ToolHandler;
use crate::limiter::{Limiter, PrincipalLimiters};
use crate::metrics::Metrics;
use crate::protocol::{Implementation, Tool};
use crate::registry::ToolRegistry;
use crate::tasks::{MemoryTaskStore, TaskSettings, TaskStore, Tasks};
use crate::wire::Limits;

/// Builds a [`Server`]; registration errors surface in [`build`](Self::build).
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    options: ServerOptions,
    tools: Vec<(Tool, Arc<dyn ToolHandler>)>,
    catalog: Vec<Registration>,
    changes: Option<Arc<dyn ChangeBus>>,
    task_store: Option<Arc<dyn TaskStore>>,
    #[cfg(feature = "http")]
    event_store: Option<Arc<dyn crate::events::EventStore>>,
    middleware: Vec<Arc<dyn Middleware>>,
    tool_search: Option<crate::ToolSearch>,
    lifespan: Option<Arc<dyn super::Lifespan>>,
    extensions: Vec<(String, Value)>,
    policy: Option<Arc<dyn crate::catalog::visibility::VisibilityPolicy>>,
}

/// A catalog entry given to the builder, registered in `build`.
enum Registration {
    Resource(Resource, Arc<dyn ResourceHandler>),
    Template(ResourceTemplate, Arc<dyn ResourceHandler>),
    Prompt(Prompt, Arc<dyn PromptHandler>),
    Completer(Reference, Arc<dyn Completer>),
    Skill(crate::skills::Skill),
    View(crate::apps::UiResource),
    SkillsDir(std::path::PathBuf),
}

impl ServerBuilder {
    pub(super) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            lifespan: None,
            options: ServerOptions::default(),
            tools: Vec::new(),
            catalog: Vec::new(),
            changes: None,
            task_store: None,
            #[cfg(feature = "http")]
            event_store: None,
            middleware: Vec::new(),
            tool_search: None,
            extensions: Vec::new(),
            policy: None,
        }
    }

    /// Display name of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Description of the server (2025-11-25).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Usage hints for the model, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Engine options.
    pub fn options(mut self, options: ServerOptions) -> Self {
        self.options = options;
        self
    }

    /// The bus that carries list changes and resource updates to sessions and listen streams
    /// (default: a [`LocalChangeBus`], within this process). Replicas that share one bus
    /// announce each other's changes.
    pub fn change_bus(mut self, bus: Arc<dyn ChangeBus>) -> Self {
        self.changes = Some(bus);
        self
    }

    /// Where tasks are kept (default: a [`MemoryTaskStore`], in this process).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Where legacy (2025) Streamable HTTP sessions keep their SSE events and what re-opens
    /// them, for every endpoint serving this server: replicas sharing one store let a client
    /// resume a session's stream (`Last-Event-ID`) on another replica. Set, it takes the place
    /// of [`HttpOptions::event_store`](crate::transport::http::HttpOptions::event_store).
    #[cfg(feature = "http")]
    pub fn event_store(mut self, store: Arc<dyn crate::events::EventStore>) -> Self {
        self.event_store = Some(store);
        self
    }

    /// Adds a tool (a handler behind an `Arc` is kept as it is).
    pub fn tool(mut self, tool: Tool, handler: impl ToolHandler) -> Self {
        self.tools.push((tool, share(handler, |h| Arc::new(h))));
        self
    }

    /// Adds a tool whose handler is already behind an `Arc`.
    #[deprecated(since = "0.2.0", note = "`tool` takes an `Arc<dyn ToolHandler>` too")]
    pub fn tool_arc(self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Self {
        self.tool(tool, handler)
    }

    /// Adds a resource with a fixed URI.
    pub fn resource(mut self, resource: Resource, handler: impl ResourceHandler) -> Self {
        self.catalog.push(Registration::Resource(
            resource,
            share(handler, |h| Arc::new(h)),
        ));
        self
    }

    /// Adds a resource template.
    pub fn resource_template(
        mut self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Self {
        self.catalog.push(Registration::Template(
            template,
            share(handler, |h| Arc::new(h)),
        ));
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: Prompt, handler: impl PromptHandler) -> Self {
        self.catalog.push(Registration::Prompt(
            prompt,
            share(handler, |h| Arc::new(h)),
        ));
        self
    }

    /// Puts `middleware` in front of every request (after those added before it; see
    /// [`Middleware`]).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(share(middleware, |m| Arc::new(m)));
        self
    }

    /// Puts `around` around every request, after the middlewares added before it (see
    /// [`Around`](crate::middleware::Around)); `name` names it in refusals and logs.
    pub fn around(self, name: &str, around: impl crate::middleware::Around) -> Self {
        self.middleware(super::around::AroundMiddleware::rust(around, name))
    }

    /// Sets what the app starts before its first call and stops after serving (see
    /// [`Lifespan`](crate::Lifespan)).
    pub fn lifespan(mut self, lifespan: impl super::Lifespan) -> Self {
        self.lifespan = Some(Arc::new(lifespan));
        self
    }

    /// Serves an MCP Apps view (see [`Server::add_ui_resource`]); tools added to this builder
    /// may link to it whatever the order.
    pub fn ui_resource(mut self, view: crate::apps::UiResource) -> Self {
        self.catalog.push(Registration::View(view));
        self
    }

    /// Serves a skill (the Skills extension; see [`Server::add_skill`]).
    pub fn skill(mut self, skill: crate::skills::Skill) -> Self {
        self.catalog.push(Registration::Skill(skill));
        self
    }

    /// Serves the skills under the directory `root` (see [`Server::load_skills`]).
    pub fn skills_dir(mut self, root: impl Into<std::path::PathBuf>) -> Self {
        self.catalog.push(Registration::SkillsDir(root.into()));
        self
    }

    /// Declares an extension this server serves (see [`Server::declare_extension`]).
    pub fn extension(mut self, id: impl Into<String>, settings: Value) -> Self {
        self.extensions.push((id.into(), settings));
        self
    }

    /// Decides per request who sees what (see [`Server::visible_when`]).
    pub fn visible_when(
        mut self,
        policy: impl crate::catalog::visibility::VisibilityPolicy,
    ) -> Self {
        self.policy = Some(share(policy, |p| Arc::new(p)));
        self
    }

    /// Offers the tools through a search (see [`Server::tool_search`]).
    pub fn tool_search(mut self, search: crate::ToolSearch) -> Self {
        self.tool_search = Some(search);
        self
    }

    /// Completes the arguments of a prompt or template added to this builder.
    pub fn completer(mut self, reference: Reference, completer: impl Completer) -> Self {
        self.catalog.push(Registration::Completer(
            reference,
            share(completer, |c| Arc::new(c)),
        ));
        self
    }

    /// Checks every tool and builds the server.
    pub fn build(self) -> Result<Server, Error> {
        let options = self.options;
        options.check()?;
        let metrics = Metrics::new(options.metrics);
        let registry = ToolRegistry::new(options.max_queued_calls, metrics.clone());
        let catalog = Catalog::default();
        for registration in self.catalog {
            match registration {
                Registration::Resource(def, handler) => catalog.add_resource(def, handler)?,
                Registration::Template(def, handler) => catalog.add_template(def, handler)?,
                Registration::Prompt(def, handler) => catalog.add_prompt(def, handler)?,
                Registration::Completer(reference, completer) => {
                    catalog.set_completer(reference, completer)?;
                }
                Registration::Skill(skill) => catalog.add_skill(skill)?,
                Registration::View(view) => catalog.add_view(view)?,
                Registration::SkillsDir(root) => {
                    catalog.load_skills(&root)?;
                }
            }
        }
        // After the catalog: a tool's MCP Apps view must be registered.
        catalog.set_policy(self.policy);
        for (tool, handler) in self.tools {
            registry.insert(super::server::prepare_tool(
                &registry, &catalog, tool, handler,
            )?)?;
        }
        let mut extensions = serde_json::Map::new();
        for (id, settings) in self.extensions {
            super::server::check_extension(&id, &settings)?;
            extensions.insert(id, settings);
        }
        let keys = match options.request_state_keys.clone() {
            Some(keys) => keys,
            None => StateKeys::ephemeral()?,
        };
        let sealer = Sealer::new(
            keys,
            options.request_state_ttl,
            options.max_request_state_bytes,
            &self.info.name,
        );
        // Announced from here on: what was registered above is what a client first lists.
        let changes = self
            .changes
            .unwrap_or_else(|| Arc::new(LocalChangeBus::default()));
        registry.announce_to(changes.clone());
        catalog.announce_to(changes.clone());
        let tasks = Arc::new(Tasks::new(
            self.task_store
                .unwrap_or_else(|| Arc::new(MemoryTaskStore::default())),
            changes.clone(),
            TaskSettings {
                ttl: options.task_ttl,
                poll_interval: options.task_poll_interval,
                max_tasks: options.max_tasks,
                max_per_principal: options.max_tasks_per_principal,
            },
            metrics.clone(),
        ));
        let queued_calls: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let mut inner = ServerInner {
            info: self.info,
            instructions: self.instructions,
            limits: Limits {
                max_frame_bytes: options.max_frame_bytes,
                max_depth: options.max_depth,
            },
            call_limiter: Limiter::sharing_queue(
                options.max_concurrent_calls,
                options.max_queued_calls,
                queued_calls.clone(),
            ),
            principal_limiters: PrincipalLimiters::new(
                options.max_concurrent_calls_per_principal,
                options.max_queued_calls,
                queued_calls.clone(),
            ),
            queued_calls,
            registry,
            catalog,
            modern_stamp: Arc::new(ModernStamp::new(Value::Null, 0, CacheScope::Private)),
            private_stamp: Arc::new(ModernStamp::new(Value::Null, 0, CacheScope::Private)),
            sealer,
            listeners: Arc::new(Listeners::new(options.max_listen_streams)),
            changes,
            watchers: Arc::default(),
            tasks,
            #[cfg(feature = "http")]
            event_store: self.event_store,
            middleware: Chain::default(),
            search: Default::default(),
            stopping: std::sync::Mutex::default(),
            lifespan: super::LifespanGate::new(options.drain_timeout),
            metrics,
            options,
            extensions: std::sync::RwLock::new(extensions),
        };
        for middleware in self.middleware {
            inner.middleware.add(middleware);
        }
        inner.search.set(&inner.registry, self.tool_search)?;
        inner.lifespan.set(self.lifespan);
        inner.modern_stamp = Arc::new(ModernStamp::new(
            modern_server_info(&inner),
            inner.options.cache_ttl_ms,
            inner.options.cache_scope,
        ));
        inner.private_stamp = Arc::new(ModernStamp::new(
            modern_server_info(&inner),
            inner.options.cache_ttl_ms,
            CacheScope::Private,
        ));
        Ok(Server {
            inner: Arc::new(inner),
        })
    }
}
