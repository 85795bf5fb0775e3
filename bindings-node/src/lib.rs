//! The `toolwire` Node addon: values converted between JavaScript and core, and core's calls
//! brought to the JavaScript thread: handlers are called on it (`handler.rs`), and core's
//! stdio loop is given turns from libuv there (`stdio.rs`, glue only: the reading, framing and
//! writing are core's `host::HostStdio`). No protocol logic lives here. The JavaScript API on
//! top is in `../lib/`.

// Exported functions are registered with Node when the addon loads, which `cfg(test)` builds
// (clippy --all-targets) leave out, so they look unused there.
#![cfg_attr(test, allow(dead_code))]

mod catalog;
mod client;
mod compose;
mod connection;
mod context;
mod errors;
mod handler;
mod hosted;
mod http;
mod js_thread;
mod lifespan;
mod logs;
mod middleware;
mod mount;
mod runtime;
mod server;
mod settle;
mod stdio;
mod vectors;

/// Runs when Node loads the addon.
#[napi_derive::module_init]
fn init() {
    runtime::install();
    // The engine's own logs go to stderr when TOOLWIRE_LOG asks for them, and to the handler
    // `onEngineLog` sets (off until then).
    toolwire::logs::init_with_drain(None);
}

// The engine allocates a little per call (frames, JSON values); glibc's malloc and free were
// about a tenth of a call's CPU under perf. Only the addon's own allocations use mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
