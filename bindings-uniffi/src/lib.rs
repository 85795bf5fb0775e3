//! The Kotlin and Swift binding of the toolwire engine, through UniFFI.
//!
//! This crate converts types and calls core: tool definitions and results cross as records,
//! JSON crosses as text, and a host-language handler is a foreign trait the engine awaits like
//! any Rust handler. Beside UniFFI, `jvm_abi` is the Kotlin wrapper's private interface: the
//! queue its handlers take calls from (`queue`) and core's host-thread stdio loop (`driver`),
//! kept out of the generated API. The Kotlin and Swift sources are generated from the built
//! library (`uniffi-bindgen generate --library`); see `docs/languages/kotlin-swift.md`.

mod catalog;
mod client;
mod compose;
mod connection;
mod context;
mod definition;
mod driver;
mod errors;
mod handler;
mod http;
mod jvm_abi;
mod jvm_mount;
mod lifespan;
mod middleware;
mod mount;
mod queue;
mod result;
mod runtime;
mod server;
mod vectors;
mod visibility;

pub use catalog::{
    ArgumentCompleter, PromptArgumentDefinition, PromptDefinition, PromptMessageRecord,
    PromptRenderer, PromptRendering, PromptRole, ResourceContent, ResourceDefinition,
    ResourceReader,
};
pub use client::{Client, ClientAnswerer, ClientOptions, ClientProgress};
pub use connection::Connection;
pub use context::{CallContext, ClientInfo, LogLevel, Question, RequestId, Root};
pub use definition::{
    Icon, ServerConfig, TaskSupport, ToolAnnotations, ToolDefinition, UiResourceDefinition,
    Visibility,
};
pub use errors::ToolwireError;
pub use handler::{BlockingToolHandler, ToolHandler};
pub use http::{BearerTokenValidator, HttpServer, HttpServerOptions, TokenGrant, TokenVerdict};
pub use lifespan::{LifespanHold, LifespanHooks};
pub use middleware::{
    AroundCall, AroundFunction, Ending, Outcome, OutcomeKind, OutcomeListener, RequestInfo,
};
pub use mount::{HttpEndpoint, HttpEndpointOptions, HttpExchange, HttpHeader, HttpResponseHead};
pub use result::{ContentBlock, ToolResult};
pub use server::Server;

uniffi::setup_scaffolding!("toolwire");

// glibc's malloc/free were a sixth of a pipelined call's CPU in the Kotlin demo under perf
// (the engine allocates per message); only the library's own allocations use mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
