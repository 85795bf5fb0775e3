#![doc = include_str!("../README.md")]
#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]
// Without Streamable HTTP, the engine's HTTP-only internals (exchanges, SSE streams) go unused.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

mod cancel;
pub mod catalog;
pub mod changes;
pub mod client;
pub mod compose;
mod dispatch;
mod error;
#[cfg(feature = "http")]
mod events;
mod flag;
mod handler;
pub mod host;
mod limiter;
#[cfg(feature = "env-logs")]
pub mod logs;
mod metrics;
/// Middleware: the host's rules in front of every request ([`Middleware`]) and what they see.
pub mod middleware {
    pub use crate::dispatch::around::{Around, Ended, Next, Refusal};
    pub use crate::dispatch::middleware::{Middleware, Outcome, RequestInfo, Verdict};
}
pub mod apps;
pub mod protocol;
#[cfg(feature = "redis")]
pub mod redis;
mod registry;
mod runtime;
pub mod skills;
pub mod tasks;
#[cfg(feature = "otel")]
pub mod telemetry;
pub mod transport;
pub mod wire;

pub use apps::UiResource;
pub use catalog::visibility::{CatalogItem, ItemKind, Viewer, VisibilityPolicy};
pub use catalog::{
    Completer, Completion, CompletionRequest, Prompt, PromptArgument, PromptHandler, PromptMessage,
    PromptRequest, PromptResult, Reference, Resource, ResourceContents, ResourceHandler,
    ResourceRequest, ResourceTemplate, Role,
};
pub use changes::{Change, ChangeBus, ChangeFeed, LocalChangeBus};
pub use dispatch::middleware::Middleware;
pub use dispatch::modern::{CacheScope, StateKeys};
pub use dispatch::trace::SPAN_TARGET;
pub use dispatch::{
    Lifespan, LifespanFuture, LifespanHold, Outbound, Server, ServerBuilder, ServerOptions, Session,
};
pub use error::Error;
pub use handler::{Context, RequestOptions, ToolError, ToolHandler};
pub use protocol::{
    Content, Implementation, InputRequired, LogLevel, ProtocolVersion, Root, TaskSupport, Tool,
    ToolAnnotations, ToolOutput, TraceContext, Visibility,
};
pub use registry::{ToolSearch, Violation};
pub use skills::Skill;
pub use tasks::{TaskStatus, TaskStore};
pub use tokio_util::sync::CancellationToken;
pub use wire::{ErrorCode, ErrorObject, RequestId};

/// The `Content-Type` of [`Server::metrics_text`] (Prometheus text, version 0.0.4).
pub const METRICS_CONTENT_TYPE: &str = metrics::CONTENT_TYPE;

/// The repository README's examples compile (checked by `cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct RepositoryReadme;

/// The documentation site's Rust pages' examples compile (`cargo test --doc`; the replicas
/// page's needs the `redis` feature, which `cargo test --workspace` turns on through the demo).
#[cfg(doctest)]
#[doc = include_str!("../../docs/languages/rust.md")]
struct RustPage;

#[cfg(doctest)]
#[doc = include_str!("../../docs/guides/http.md")]
struct HttpGuide;
