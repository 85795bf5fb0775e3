//! One tokio runtime for the whole process: the engine's, which napi's `async fn`s also use
//! (napi would otherwise start a second one with a thread per core).

use std::sync::OnceLock;

use tokio::runtime::Handle;

static HANDLE: OnceLock<Handle> = OnceLock::new();

/// Builds the runtime and hands it to napi; called once when the addon loads.
pub(crate) fn install() {
    HANDLE.get_or_init(|| {
        // Core's runtime, built here because napi must own it. Its one worker runs what does
        // not happen on the JS thread (timers, deadlines, the back-channel, answers of calls
        // that returned a Promise).
        let runtime = toolwire::host::build_runtime()
            .unwrap_or_else(|err| panic!("toolwire: cannot start its runtime: {err}"));
        let handle = runtime.handle().clone();
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
        handle
    });
}

pub(crate) fn runtime() -> &'static Handle {
    install();
    HANDLE
        .get()
        .unwrap_or_else(|| unreachable!("installed above"))
}
