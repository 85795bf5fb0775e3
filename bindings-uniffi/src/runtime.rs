//! One tokio runtime for the whole process, shared by every server.

use std::sync::OnceLock;

use tokio::runtime::Runtime;

/// One worker runs the protocol (cross-core wake-ups cost more than they give for protocol
/// work); Kotlin coroutines and Swift tasks run on their own executors, and blocking handlers
/// on the runtime's blocking threads.
pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        toolwire::logs::init_from_env(None);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolwire")
            .enable_all()
            .build()
            .unwrap_or_else(|err| panic!("toolwire: cannot start its runtime: {err}"))
    })
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
