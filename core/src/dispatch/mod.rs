//! Dispatch: sessions, routing, tool calls, correlation in both directions, limits.
//!
//! | module | job |
//! |---|---|
//! | `options`, `builder`, `server` | a server's settings, how it is built, what its sessions share |
//! | `session` | one client's state: calls in flight, outbound channel, shutdown |
//! | `router`, `method` | each inbound message to its handler, through one method table |
//! | `lifecycle` | `initialize`, `notifications/initialized`, the log level |
//! | `call`, `context` | a tool call from arguments to answer, and what its handler gets |
//! | `catalog_methods`, `paging` | resources, prompts, completion; the list methods' pages |
//! | `watch` | list changes and resource updates pushed to each session |
//! | `peer` | requests to the client |
//! | `outbound`, `request_stream`, `responder` | a session's outbound channel, one message's own stream, answering each request once |
//! | `middleware`, `around` | the host's rules before each request and after it; one function around it |
//! | `exchange` | what the HTTP transport needs beyond frames in and out |
//! | `modern` | the 2026-07-28 era: the `_meta` ladder, discover, MRTR, listen |

pub(crate) mod around;
mod builder;
mod call;
mod catalog_methods;
mod context;
pub(crate) mod hooks;
mod lifecycle;
mod lifespan;
pub(crate) mod middleware;
pub(crate) mod modern;
mod options;
mod outbound;
mod paging;
mod peer;
mod request_stream;
mod responder;
mod router;
pub(crate) mod search;
pub(crate) mod server;
mod session;
pub(crate) mod trace;
pub(crate) mod visibility;
mod watch;

pub use builder::ServerBuilder;
pub use context::json_number;
pub(crate) use lifespan::LifespanGate;
pub use lifespan::{Lifespan, LifespanFuture, LifespanHold};
pub use options::ServerOptions;
pub(crate) use request_stream::RequestStream;
#[cfg(feature = "http")]
pub(crate) use request_stream::{StreamItem, StreamReceiver};
pub use server::Server;
pub(crate) use session::SessionShared;
pub use session::{Outbound, Session};
