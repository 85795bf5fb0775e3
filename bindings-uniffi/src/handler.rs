//! Host-language handlers: foreign traits the engine awaits like any Rust handler.

use std::sync::Arc;

use serde_json::Value;
use toolwire::host::json_text;
use toolwire::{Context, ToolError, ToolOutput};

use crate::context::CallContext;
use crate::errors::ToolwireError;
use crate::result::ToolResult;
use crate::runtime::runtime;

/// A tool's implementation in Kotlin (`suspend fun`) or Swift (`async throws`).
///
/// `arguments_json` is the call's arguments as JSON text, already checked against the input
/// schema. Throwing gives the client an `isError` result with the exception's message; a
/// cancelled call cancels the coroutine (Kotlin) or task (Swift).
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ToolHandler: Send + Sync {
    /// Runs one call.
    async fn call(
        &self,
        context: Arc<CallContext>,
        arguments_json: String,
    ) -> Result<ToolResult, ToolwireError>;
}

/// A tool's implementation as a plain blocking function. Each call runs on a thread of the
/// engine's blocking pool, so it may block (I/O, locks, CPU work) without holding up others.
#[uniffi::export(with_foreign)]
pub trait BlockingToolHandler: Send + Sync {
    /// Runs one call.
    fn call(
        &self,
        context: Arc<CallContext>,
        arguments_json: String,
    ) -> Result<ToolResult, ToolwireError>;
}

pub(crate) struct ForeignTool(pub(crate) Arc<dyn ToolHandler>);

#[async_trait::async_trait]
impl toolwire::ToolHandler for ForeignTool {
    async fn call(&self, context: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        let outcome = self
            .0
            .call(CallContext::new(context), json_text(&arguments))
            .await;
        into_output(outcome)
    }
}

pub(crate) struct BlockingTool(pub(crate) Arc<dyn BlockingToolHandler>);

#[async_trait::async_trait]
impl toolwire::ToolHandler for BlockingTool {
    async fn call(&self, context: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        let handler = self.0.clone();
        let arguments = json_text(&arguments);
        let call =
            runtime().spawn_blocking(move || handler.call(CallContext::new(context), arguments));
        match call.await {
            Ok(outcome) => into_output(outcome),
            Err(err) => Err(ToolError::new(format!("the tool failed: {err}"))),
        }
    }
}

fn into_output(outcome: Result<ToolResult, ToolwireError>) -> Result<ToolOutput, ToolError> {
    match outcome {
        Ok(result) => result.into_output(),
        Err(err) => Err(err.into_tool_error()),
    }
}
