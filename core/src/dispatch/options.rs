//! [`ServerOptions`]: the engine's settings, their defaults, and the check `build` makes.

use std::time::Duration;

use super::modern::{CacheScope, StateKeys};
use crate::Error;
use crate::protocol::LogLevel;
use crate::wire::Limits;

/// Engine settings. Start from `ServerOptions::default()` and change fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Largest inbound frame in bytes (default 4 MiB).
    pub max_frame_bytes: usize,
    /// Deepest JSON nesting accepted (default 64).
    pub max_depth: usize,
    /// Tools per `tools/list` page; `None` (default) lists all in one page.
    pub page_size: Option<usize>,
    /// Tool calls that may run at once, across all sessions of this server (default 4096).
    pub max_concurrent_calls: usize,
    /// Tool calls of one session that may run at once (default 1024). A session past it waits
    /// behind its own limit, holding none of the server's slots: one greedy session takes at
    /// most this many of [`max_concurrent_calls`](Self::max_concurrent_calls) while others are
    /// served. Its waiting calls count against `max_queued_calls` with everyone's. A stateless
    /// HTTP or 2026-07-28 exchange is a session of one request: this limit does not reach it,
    /// [`max_concurrent_calls_per_principal`](Self::max_concurrent_calls_per_principal) does.
    pub max_concurrent_calls_per_session: usize,
    /// Tool calls of one authenticated principal (an HTTP bearer token's subject) that may run
    /// at once, over all its sessions and stateless requests together (default 1024). Past it
    /// the principal's calls wait behind its own limit, as a session's do, so one token holder
    /// cannot take the server's slots however many sessions it opens. Calls without a
    /// principal are not under it.
    pub max_concurrent_calls_per_principal: usize,
    /// Calls that may wait for a slot before calls are refused (default 16384): one bound for
    /// the server's queue and every session's together, and one for each tool with a limit.
    pub max_queued_calls: usize,
    /// Deadline for tools without their own (default: none).
    pub default_tool_timeout: Option<Duration>,
    /// How long a server→client request waits for an answer, reset by progress (default 60 s).
    pub client_request_timeout: Duration,
    /// The hard maximum for a server→client request, progress or not (default 10 min).
    pub client_request_max_timeout: Duration,
    /// On end of input, how long in-flight calls may finish before they are cancelled (default 5 s).
    pub drain_timeout: Duration,
    /// Window in which registry changes are coalesced into one `list_changed` (default 50 ms).
    pub list_changed_debounce: Duration,
    /// The log level before the client sends `logging/setLevel` (default info).
    pub default_log_level: LogLevel,
    /// The longest a byte-stream transport (stdio) keeps looking for the client's next frame
    /// before it lets the runtime sleep (default 200 µs, KVM's halt-polling ceiling; zero:
    /// never). Within it the window adapts to the client's pace: a client that calls now and
    /// then costs nothing, one in a tight loop at most this much CPU per request, and is
    /// spared a sleep and wake-up per request.
    pub idle_poll: Duration,
    /// Bytes of answers and notifications [`Server::serve`](crate::Server::serve) (stdio, a transport of your own)
    /// may hold for a client that is not reading them (default 4 MiB). Past it the server reads no
    /// new requests until the client has taken them down to half; calls in flight go on,
    /// and every request read is answered.
    pub max_outbound_bytes: usize,
    /// 2026-07-28: how long a client may cache `server/discover`, the lists and reads, in
    /// milliseconds (default 0: re-fetch each time).
    pub cache_ttl_ms: u64,
    /// 2026-07-28: who may share those cached answers (default private).
    pub cache_scope: CacheScope,
    /// 2026-07-28: the keys that seal `requestState` between MRTR rounds. `None` (default): one
    /// random key for this process, so a round must come back to the same process before it
    /// restarts; replicas share keys through [`StateKeys::from_secrets`].
    pub request_state_keys: Option<StateKeys>,
    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub request_state_ttl: Duration,
    /// The largest sealed `requestState`, in bytes, made or accepted (default 64 KiB).
    pub max_request_state_bytes: usize,
    /// Serve 2026-07-28 only: `initialize` is refused with -32022 naming the versions spoken
    /// (default false: both eras).
    pub modern_only: bool,
    /// `subscriptions/listen` streams open at once across the server (default 1024); more are
    /// refused.
    pub max_listen_streams: usize,
    /// Over HTTP: frames a 2026-07-28 answer stream (a listen stream above all) may have waiting
    /// for a slow client before it is ended (default 256). On stdio and other duplex transports
    /// the session's one outbound queue carries everything, as in the legacy era.
    pub listen_backlog: usize,
    /// Tasks extension: how long a call of a task-capable tool may run in its request before
    /// it becomes a task (default 250 ms). A handler that asks the client something becomes
    /// one at once; one that answers sooner answers in its request.
    pub task_after: Duration,
    /// How long a task is kept after its creation, finished or not (its `ttlMs`; default one
    /// hour). A handler still running then is cancelled.
    pub task_ttl: Duration,
    /// How often clients are told to poll a task (`pollIntervalMs`; default 1 s).
    pub task_poll_interval: Duration,
    /// Tasks kept at once, finished ones included until they expire (default 10,000); past
    /// it, a call that would become a task is refused with -32603 (retry later).
    pub max_tasks: usize,
    /// Tasks one principal (or, without authentication, everyone together) may hold at once
    /// (default 1,000).
    pub max_tasks_per_principal: usize,
    /// Count requests, calls by tool, refusals by limit, sessions and streams for
    /// [`Server::metrics`](crate::Server::metrics) and [`Server::metrics_text`](crate::Server::metrics_text) (default true; a few atomic additions
    /// per request).
    pub metrics: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        let limits = Limits::default();
        ServerOptions {
            max_frame_bytes: limits.max_frame_bytes,
            max_depth: limits.max_depth,
            page_size: None,
            max_concurrent_calls: 4096,
            max_concurrent_calls_per_session: 1024,
            max_concurrent_calls_per_principal: 1024,
            max_queued_calls: 16384,
            default_tool_timeout: None,
            client_request_timeout: Duration::from_secs(60),
            client_request_max_timeout: Duration::from_secs(600),
            drain_timeout: Duration::from_secs(5),
            list_changed_debounce: Duration::from_millis(50),
            default_log_level: LogLevel::Info,
            idle_poll: Duration::from_micros(200),
            max_outbound_bytes: 4 << 20,
            cache_ttl_ms: 0,
            cache_scope: CacheScope::Private,
            request_state_keys: None,
            request_state_ttl: Duration::from_secs(600),
            max_request_state_bytes: 64 * 1024,
            modern_only: false,
            max_listen_streams: 1024,
            listen_backlog: 256,
            task_after: Duration::from_millis(250),
            task_ttl: Duration::from_secs(3600),
            task_poll_interval: Duration::from_secs(1),
            max_tasks: 10_000,
            max_tasks_per_principal: 1_000,
            metrics: true,
        }
    }
}

impl ServerOptions {
    /// The settings no server can run with, refused by name.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let at_least_one = [
            ("max_concurrent_calls", self.max_concurrent_calls),
            (
                "max_concurrent_calls_per_session",
                self.max_concurrent_calls_per_session,
            ),
            (
                "max_concurrent_calls_per_principal",
                self.max_concurrent_calls_per_principal,
            ),
            ("page_size", self.page_size.unwrap_or(1)),
            ("listen_backlog", self.listen_backlog),
        ];
        for (name, value) in at_least_one {
            if value == 0 {
                return Err(Error::InvalidArgument(format!("{name} must be at least 1")));
            }
        }
        if self.max_tasks == 0 || self.max_tasks_per_principal == 0 {
            return Err(Error::InvalidArgument(
                "max_tasks and max_tasks_per_principal must be at least 1".into(),
            ));
        }
        if self.task_ttl.is_zero() || self.task_poll_interval.is_zero() {
            return Err(Error::InvalidArgument(
                "task_ttl and task_poll_interval must be longer than zero".into(),
            ));
        }
        if self.max_request_state_bytes < 1024 {
            return Err(Error::InvalidArgument(
                "max_request_state_bytes must be at least 1024".into(),
            ));
        }
        Ok(())
    }
}
