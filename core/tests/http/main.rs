//! Streamable HTTP from the outside: a real hyper client against `Server::serve_http` on
//! 127.0.0.1: status codes of every refusal, sessions and their isolation, SSE streams and
//! resumption, stateless mode, Host/Origin checks, bearer tokens, idle reaping, many
//! sessions at once, and a seeded fuzzer of the whole request path.

mod auth;
mod bodies;
mod framing;
mod fuzz;
mod metrics;
mod modern;
mod modes;
mod mount;
mod principals;
#[cfg(feature = "redis")]
#[path = "../common/redis_server.rs"]
mod redis_server;
mod refusals;
#[cfg(feature = "redis")]
mod replicas;
#[path = "../common/rng.rs"]
mod rng;
mod sessions;
mod slow;
mod streams;
mod support;
