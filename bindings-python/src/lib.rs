//! The `toolwire._native` extension module: values converted between Python and core, and
//! `async def` handlers brought to their asyncio loop (`bridge.rs`: a wake-up descriptor the
//! loop watches, then the coroutines run on it). Stdio and HTTP are served by core. No protocol
//! logic lives here. The Python API on top is in `python/toolwire/`.

#![deny(unsafe_op_in_unsafe_fn)]

mod bridge;
mod catalog;
mod client;
mod compose;
mod context;
mod convert;
mod errors;
mod handler;
mod http;
mod lifespan;
mod logs;
mod middleware;
mod mount;
mod server;
mod threads;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The engine's own logs: to stderr when TOOLWIRE_LOG asks for them, and to `logging`
    // through the drain `toolwire._logs` empties.
    logs::init();
    m.add_class::<server::NativeServer>()?;
    m.add_class::<server::NativeSession>()?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<client::ClientReply>()?;
    m.add_class::<server::StopSignal>()?;
    m.add_class::<context::NativeContext>()?;
    m.add_class::<handler::InputRequiredAnswer>()?;
    m.add_class::<bridge::LoopBridge>()?;
    m.add_class::<bridge::CallDone>()?;
    m.add_class::<lifespan::LifespanDone>()?;
    m.add_class::<lifespan::NativeLifespanHold>()?;
    m.add_class::<http::NativeHttpServer>()?;
    m.add_class::<mount::NativeHttpEndpoint>()?;
    m.add_class::<compose::NativeMount>()?;
    m.add_class::<mount::NativeExchange>()?;
    m.add_class::<middleware::PyAroundCall>()?;
    m.add_function(wrap_pyfunction!(logs::set_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(logs::next_logs, m)?)?;
    m.add_function(wrap_pyfunction!(logs::close_logs, m)?)?;
    errors::register(m)?;
    Ok(())
}
