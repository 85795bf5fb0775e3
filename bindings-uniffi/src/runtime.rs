//! One tokio runtime for the whole process, shared by every server.

use tokio::runtime::Runtime;

/// The engine's runtime (core's, shared by every server); the engine's logs go to stderr as
/// `TOOLWIRE_LOG` says, set up on first use.
pub(crate) fn runtime() -> &'static Runtime {
    static LOGS: std::sync::Once = std::sync::Once::new();
    LOGS.call_once(|| toolwire::logs::init_from_env(None));
    toolwire::host::runtime()
}

/// Runs `future` on the engine's runtime and waits for it from whatever executor polls the
/// returned future (a Kotlin coroutine, a Swift task): engine futures need tokio's timers.
pub(crate) async fn on_runtime<T: Send + 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, crate::ToolwireError> {
    runtime()
        .spawn(future)
        .await
        .map_err(|err| crate::ToolwireError::Internal {
            detail: format!("the engine task failed: {err}"),
        })
}
