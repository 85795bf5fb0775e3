//! Dispatch: sessions, routing, tool calls, correlation in both directions, limits.

mod call;
mod catalog;
mod limiter;
mod local;
mod peer;
mod responder;
mod server;
mod session;

pub(crate) use limiter::Limiter;
pub use local::LocalExecutor;
pub use peer::RequestOptions;
pub(crate) use responder::{RequestStream, StreamItem, StreamReceiver};
pub use server::{Server, ServerBuilder, ServerOptions};
pub(crate) use session::SessionShared;
pub use session::{CallTask, HostHooks, Outbound, Session};
