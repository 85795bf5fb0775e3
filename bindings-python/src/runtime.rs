//! One tokio runtime for the whole process, shared by every server.

use std::sync::OnceLock;

use tokio::runtime::Runtime;

/// A single worker thread runs the engine (cross-core wake-ups cost more than they give for
/// protocol work); Python's sync handlers run on the runtime's blocking threads.
pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolwire")
            .enable_all()
            .build()
            .unwrap_or_else(|err| panic!("toolwire: cannot start its runtime: {err}"))
    })
}
