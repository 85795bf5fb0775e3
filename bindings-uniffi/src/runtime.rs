//! One tokio runtime for the whole process, shared by every server.

use tokio::runtime::Runtime;

/// The engine's runtime (core's, shared by every server); the engine's logs are set up on
/// first use.
pub(crate) fn runtime() -> &'static Runtime {
    init_logs();
    toolwire::host::runtime()
}

/// The engine's logs: to stderr as `TOOLWIRE_LOG` says, and into the drain the Kotlin wrapper
/// empties into SLF4J (off until it sets a level; see `jvm_abi`). Once per process.
pub(crate) fn init_logs() {
    static LOGS: std::sync::Once = std::sync::Once::new();
    LOGS.call_once(|| {
        toolwire::logs::init_with_drain(None);
    });
}

/// Runs `future` on the engine's runtime and waits for it from whatever executor polls the
/// returned future (a Kotlin coroutine, a Swift task): engine futures need tokio's timers.
pub(crate) async fn on_runtime<T: Send + 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, crate::ToolwireError> {
    runtime().spawn(future).await.map_err(task_failed)
}

/// `on_runtime`, but the work is aborted when the caller gives up (a cancelled coroutine or
/// task) instead of running on for nobody.
pub(crate) async fn on_runtime_abortable<T: Send + 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, crate::ToolwireError> {
    struct AbortOnDrop(tokio::task::AbortHandle);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let task = runtime().spawn(future);
    let _abort = AbortOnDrop(task.abort_handle());
    task.await.map_err(task_failed)
}

/// A task that panicked (or was aborted) as the binding's error: no panic crosses the FFI.
fn task_failed(err: tokio::task::JoinError) -> crate::ToolwireError {
    crate::ToolwireError::Internal {
        detail: format!("the engine task failed: {err}"),
    }
}
