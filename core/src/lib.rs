#![doc = include_str!("../README.md")]
#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod catalog;
mod context;
mod dispatch;
mod error;
mod flag;
mod handler;
#[cfg(feature = "env-logs")]
pub mod logs;
pub mod protocol;
mod registry;
pub mod transport;
pub mod wire;

pub use catalog::{
    Completer, Completion, CompletionRequest, JsonCallback, Prompt, PromptArgument, PromptHandler,
    PromptMessage, PromptRequest, PromptResult, Reference, Resource, ResourceContents,
    ResourceHandler, ResourceRequest, ResourceTemplate, Role, ViaJson,
};
pub use context::{Context, json_number};
pub use dispatch::{
    CallTask, HostHooks, LocalExecutor, Outbound, RequestOptions, Server, ServerBuilder,
    ServerOptions, Session,
};
pub use error::Error;
pub use handler::{ToolError, ToolHandler};
pub use protocol::{
    Content, Implementation, LogLevel, ProtocolVersion, Tool, ToolAnnotations, ToolOutput,
};
pub use registry::{Violation, invalid_arguments_text};
pub use tokio_util::sync::CancellationToken;
pub use wire::{ErrorCode, ErrorObject, RequestId};

/// The repository README's examples compile (checked by `cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct RepositoryReadme;
