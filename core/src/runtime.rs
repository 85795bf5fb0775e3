//! The engine's runtime: built for a host that must own it, or shared by the process. Low in the
//! stack, so that anything that spawns outside a runtime (the Redis subscription) can reach it
//! without reaching up to `host`, which re-exports both.

use std::sync::OnceLock;

use tokio::runtime::Runtime;

/// Builds an engine runtime: one worker thread named `toolwire` runs the protocol (cross-core
/// wake-ups cost more than they give for protocol work); host handlers run on the host's own
/// threads, blocking ones on the runtime's blocking pool. For a binding whose host framework
/// must own the runtime (napi); the others use [`runtime()`].
pub fn build_runtime() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("toolwire")
        .enable_all()
        .build()
}

/// The process's engine runtime, built by [`build_runtime`] on first use and shared by every
/// server of the process.
///
/// # Panics
/// If the OS refuses the runtime's thread or its I/O driver at first use; a binding calls this
/// inside its own panic guard.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        build_runtime().unwrap_or_else(|err| panic!("toolwire: cannot start its runtime: {err}"))
    })
}
