//! The seam between the engine and tool code: one async trait, implemented by closures in
//! Rust and once per binding for host-language functions.

pub(crate) mod context;

pub use context::{Context, RequestOptions};

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::protocol::{InputRequired, ToolOutput};

/// A tool's implementation.
///
/// The engine calls it with validated arguments (they satisfy the tool's `inputSchema`).
/// Returning `Err` gives the client an `isError: true` result with the error's message; a
/// panic is caught and reported the same way without details.
///
/// The call's future is first polled inline, where the frame was received, so a handler that
/// finishes at once costs no task spawn; if it is pending it continues as its own task. As
/// everywhere in async Rust, do blocking or CPU-heavy work in `tokio::task::spawn_blocking`,
/// or it holds up the session until its first `.await`.
#[async_trait]
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs one call.
    async fn call(&self, ctx: Context, arguments: Value) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<F, Fut> ToolHandler for F
where
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    async fn call(&self, ctx: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        (self)(ctx, arguments).await
    }
}

/// A handler shared behind an `Arc` is a handler: the registering methods take it as any other.
#[async_trait]
impl<T: ToolHandler + ?Sized> ToolHandler for Arc<T> {
    async fn call(&self, ctx: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        (**self).call(ctx, arguments).await
    }
}

/// A tool's own failure, shown to the model as an `isError: true` result.
///
/// Any `std::error::Error` converts into it, so `?` works in handlers; use
/// [`ToolError::new`] for a plain message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    not_found: bool,
    input_required: Option<Box<InputRequired>>,
    /// Set for [`protocol`](ToolError::protocol): the JSON-RPC error code to answer with.
    protocol_code: Option<i32>,
}

impl ToolError {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            not_found: false,
            input_required: None,
            protocol_code: None,
        }
    }

    /// A failure of the call itself rather than of the tool's work: the client gets a
    /// JSON-RPC error with `code` (e.g. -32603) instead of an `isError` result, and a task
    /// ends `failed` instead of `completed`. For what the model should read and act on, use
    /// [`new`](Self::new).
    pub fn protocol(code: i32, message: impl Into<String>) -> Self {
        ToolError {
            protocol_code: Some(code),
            ..ToolError::new(message)
        }
    }

    /// The JSON-RPC error code of a [`protocol`](Self::protocol) failure.
    pub fn protocol_code(&self) -> Option<i32> {
        self.protocol_code
    }

    /// What was asked for does not exist: from a resource handler, the client gets
    /// `-32002 Resource not found` (`-32602` in 2026-07-28, which retired `-32002`; elsewhere it
    /// is an ordinary failure).
    pub fn not_found(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            not_found: true,
            input_required: None,
            protocol_code: None,
        }
    }

    /// The input the handler needs first (2026-07-28 MRTR), if that is what this is.
    pub fn input_required(&self) -> Option<&InputRequired> {
        self.input_required.as_deref()
    }

    pub(crate) fn take_input_required(&mut self) -> Option<InputRequired> {
        self.input_required.take().map(|b| *b)
    }

    /// Whether this is a [`not_found`](Self::not_found) failure.
    pub fn is_not_found(&self) -> bool {
        self.not_found
    }

    /// The message the client sees.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(err: E) -> Self {
        ToolError::new(err.to_string())
    }
}

/// A handler answers `input_required` by returning this as its error.
impl From<InputRequired> for ToolError {
    fn from(input: InputRequired) -> Self {
        ToolError {
            message: "the client's input is needed first".into(),
            not_found: false,
            input_required: Some(Box::new(input)),
            protocol_code: None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
