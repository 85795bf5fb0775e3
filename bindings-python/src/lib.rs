//! The `toolwire._native` extension module: types converted, core called, nothing more.
//! The Python API on top lives in `python/toolwire/`.

#![deny(unsafe_op_in_unsafe_fn)]

mod bridge;
mod context;
mod convert;
mod errors;
mod handler;
mod runtime;
mod server;

use pyo3::prelude::*;

/// The engine's own logs go to stderr when `TOOLWIRE_LOG` asks for them (`level` or
/// `target=level,…`); stdout is left to the protocol.
fn init_engine_logs() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let Some(filter) = std::env::var("TOOLWIRE_LOG")
        .ok()
        .and_then(|spec| spec.parse::<tracing_subscriber::filter::Targets>().ok())
    else {
        return;
    };
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(filter)
        .try_init();
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init_engine_logs();
    m.add_class::<server::NativeServer>()?;
    m.add_class::<server::NativeSession>()?;
    m.add_class::<context::NativeContext>()?;
    m.add_class::<bridge::LoopBridge>()?;
    errors::register(m)?;
    Ok(())
}
