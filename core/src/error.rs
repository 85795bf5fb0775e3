//! The engine's one error type.

use std::time::Duration;

use crate::wire::ErrorObject;

/// Everything that can go wrong in the engine's API (registration, serving, the back-channel).
///
/// Protocol errors that go on the wire are [`ErrorObject`]s; a tool's own failure is a
/// [`ToolError`](crate::ToolError). Bindings map this enum, once each, to their idiom.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool name outside 1–128 characters of `[A-Za-z0-9_.-]`.
    #[error("invalid tool name {name:?}: use 1 to 128 characters of A-Z, a-z, 0-9, '_', '.', '-'")]
    InvalidToolName {
        /// The rejected name.
        name: String,
    },
    /// A tool with this name is already registered.
    #[error("a tool named {name:?} is already registered")]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// An input or output schema that is not a valid JSON Schema of an object.
    #[error("invalid {which} of tool {tool:?}: {message}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `"inputSchema"` or `"outputSchema"`.
        which: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A definition (a tool, resource, resource template or prompt, as JSON or built) that
    /// cannot be registered: unreadable, incomplete, or its name or URI already taken.
    #[error("invalid {kind} definition: {message}")]
    InvalidDefinition {
        /// `"tool"`, `"resource"`, `"resource template"`, `"prompt"`, `"completion"`.
        kind: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A result, as JSON or as a handler's returned value, that says nothing the protocol can
    /// answer with (a tool's, a resource read's, a prompt's, one content block).
    #[error("invalid {kind}: {message}")]
    InvalidResult {
        /// `"tool result"`, `"resource contents"`, `"prompt result"`, `"content block"`,
        /// `"middleware verdict"`.
        kind: &'static str,
        /// What is wrong, and what to return instead.
        message: String,
    },
    /// The client did not declare the capability a server→client request needs.
    #[error("the client did not declare the {capability} capability")]
    CapabilityNotSupported {
        /// e.g. `"sampling"`, `"elicitation"`, `"roots"`.
        capability: &'static str,
    },
    /// A server→client request got no answer in time; `notifications/cancelled` was sent.
    #[error("no response from the client after {} ms", after.as_millis())]
    Timeout {
        /// How long we waited.
        after: Duration,
    },
    /// The transport has no way for the client to answer a server→client request (stateless
    /// HTTP: each POST stands alone), so it was not sent.
    #[error(
        "cannot send {method}: this transport has no channel for the client's answer (stateless HTTP)"
    )]
    NoBackChannel {
        /// The request that could not be sent.
        method: String,
    },
    /// The operation was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The session ended before the operation finished.
    #[error("the session is closed")]
    Closed,
    /// The client answered a server→client request with an error.
    #[error("the client answered with an error: {0}")]
    Peer(ErrorObject),
    /// The server answered a request of the [client](crate::client)'s with this JSON-RPC
    /// error; or the session ended before the answer (-32000, as the official SDKs say it).
    #[error("{0}")]
    Rpc(ErrorObject),
    /// A request of the [client](crate::client)'s got no answer in time; the server was told
    /// it is cancelled.
    #[error("{method} got no answer within {} ms", after.as_millis())]
    NoAnswer {
        /// The request.
        method: String,
        /// How long it waited.
        after: Duration,
    },
    /// Reading or writing the transport failed.
    #[error("transport error: {0}")]
    Transport(#[from] std::io::Error),
    /// No tokio runtime was available to run the session on.
    #[error("no tokio runtime: {0}")]
    NoRuntime(String),
    /// An argument to an engine call was invalid.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// 2026-07-28: the client's input is needed first. `ctx.elicit`, `ctx.sample` and
    /// `ctx.list_roots` return it when the answer is not in this round; let it end the handler
    /// (`?`): the engine asks the client, who calls again with the answer.
    #[error("the client's input is needed first; the engine asks for it and the call comes again")]
    InputRequired,
    /// The server's lifespan failed to start (the app's message): every serve and call that
    /// waited for that start gets this, and the next one tries again.
    #[error("the server's lifespan failed to start: {0}")]
    Lifespan(String),
    /// What the operation needs is already in use: stdin served twice in one process, or a
    /// task store holding its limit of tasks.
    #[error("busy: {0}")]
    Busy(String),
}
