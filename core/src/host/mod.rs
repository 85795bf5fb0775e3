//! The binding seam: what a language binding needs from the engine and an application does not.
//!
//! A binding converts values and reaches its host's thread; everything else is the engine's.
//! This module is the only part of the crate written for bindings:
//!
//! | item | what it is for |
//! |---|---|
//! | [`runtime`], [`build_runtime`] | the one engine runtime of a process (a binding starts no other) |
//! | [`HostHooks`], [`Session::hosted`](crate::Session::hosted) | a session whose calls run on the host's own thread |
//! | [`LocalExecutor`] | polls those calls on the host's thread when the host is woken |
//! | [`HostStdio`] | stdio served from the host's own thread (Unix): the one stdio loop of the bindings |
//! | [`ViaJson`], [`JsonCallback`] | a host callback that takes and returns JSON text, as a resource, prompt, completion or token handler |
//! | [`AroundMiddleware`], [`HostAround`], [`AroundCall`] | a host's `middleware(request, next)`: the host runs its function, core decides what its ending means |
//! | [`StdioClaim`], [`StdinSource`], [`StdoutSink`], [`LineDecoder`] | stdin claimed by one serve at a time; stdin and stdout as a host loop reads and writes them; lines into frames |
//! | [`portable_io_forced`], [`PORTABLE_IO_ENV`] | the portable stdio path, forced for a test |
//! | [`json_text`] | a JSON value's compact text, about three times faster than `to_string()` |
//! | [`json_number`] | a number written the same way by every language (`3`, not `3.0`) |
//! | [`invalid_arguments_text`] | the text of an invalid-arguments result, for hosts that check arguments themselves |
//! | [`invalid_prompt_arguments_text`] | the same for prompt arguments (a -32602 error's message) |
//! | [`input_required_from_json`] | a host's `{inputRequests, requestState}` as an [`InputRequired`](crate::InputRequired) |
//! | [`ModernSettings`] | the 2026-07-28 options as hosts give them (text and numbers), applied once for all |
//! | [`TaskSettings`] | the tasks extension's options as hosts give them (milliseconds and counts) |
//! | [`HttpSettings`] | the Streamable HTTP options as hosts give them, read once for all (the token validator aside) |
//! | `share_state` | tasks and changes shared with other replicas through Redis (`redis` feature) |
//!
//! Applications use the crate root instead.

mod local;
#[cfg(unix)]
mod stdio;

pub use crate::catalog::json::{JsonCallback, ViaJson, input_required_from_json};
pub use crate::dispatch::around::{AroundCall, AroundMiddleware, Finished, HostAround, OnEnded};
pub use crate::dispatch::hooks::{CallTask, HostHooks};
pub use crate::dispatch::json_number;
pub use crate::registry::{invalid_arguments_text, invalid_prompt_arguments_text};
pub use crate::runtime::{build_runtime, runtime};
pub use crate::transport::{
    LineDecoder, PORTABLE_IO_ENV, StdinSource, StdioClaim, StdoutSink, portable_io_forced,
};
pub use crate::wire::json_text;
pub use local::LocalExecutor;
#[cfg(unix)]
pub use stdio::{HostStdio, StdioWaker};

/// The 2026-07-28 server options as a host hands them over, read and checked in one place.
#[derive(Clone, Debug, Default)]
pub struct ModernSettings {
    /// How long clients may cache lists, reads and `server/discover`, in milliseconds.
    pub cache_ttl_ms: Option<u64>,
    /// `"private"` or `"public"`.
    pub cache_scope: Option<String>,
    /// Secrets for the `requestState` keys (each ≥ 32 bytes; the first seals).
    pub request_state_secrets: Vec<String>,
    /// Serve 2026-07-28 only.
    pub modern_only: bool,
}

impl ModernSettings {
    /// Sets these on `options`; an unknown scope or a short secret is refused.
    pub fn apply(self, options: &mut crate::ServerOptions) -> Result<(), crate::Error> {
        if let Some(ttl) = self.cache_ttl_ms {
            options.cache_ttl_ms = ttl;
        }
        if let Some(scope) = self.cache_scope {
            options.cache_scope = match scope.as_str() {
                "private" => crate::CacheScope::Private,
                "public" => crate::CacheScope::Public,
                other => {
                    return Err(crate::Error::InvalidArgument(format!(
                        "cache scope {other:?}: use \"private\" or \"public\""
                    )));
                }
            };
        }
        if !self.request_state_secrets.is_empty() {
            options.request_state_keys =
                Some(crate::StateKeys::from_secrets(&self.request_state_secrets)?);
        }
        options.modern_only = self.modern_only;
        Ok(())
    }
}

/// The tasks extension's options as a host hands them over: durations in milliseconds, so every
/// binding gives the same numbers. The server's build checks them (no zero ttl, poll interval
/// or limit), with the message naming the option.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskSettings {
    /// How long a task-capable call runs in its request before it becomes a task.
    pub task_after_ms: Option<u64>,
    /// How long a task is kept after its creation (its `ttlMs`).
    pub task_ttl_ms: Option<u64>,
    /// How often clients are told to poll a task (`pollIntervalMs`).
    pub task_poll_interval_ms: Option<u64>,
    /// Tasks kept at once.
    pub max_tasks: Option<usize>,
    /// Tasks one principal may hold at once.
    pub max_tasks_per_principal: Option<usize>,
}

impl TaskSettings {
    /// Sets those given on `options`, leaving the others at their defaults.
    pub fn apply(self, options: &mut crate::ServerOptions) {
        let millis = std::time::Duration::from_millis;
        if let Some(after) = self.task_after_ms {
            options.task_after = millis(after);
        }
        if let Some(ttl) = self.task_ttl_ms {
            options.task_ttl = millis(ttl);
        }
        if let Some(interval) = self.task_poll_interval_ms {
            options.task_poll_interval = millis(interval);
        }
        if let Some(limit) = self.max_tasks {
            options.max_tasks = limit;
        }
        if let Some(limit) = self.max_tasks_per_principal {
            options.max_tasks_per_principal = limit;
        }
    }
}

/// `builder` with its tasks, changes and legacy sessions shared with the other replicas through the Redis at
/// `redis_url` (`None`: everything stays in this process). Connects now, so a Redis that
/// cannot be reached fails here, with the reason, not at the first task.
#[cfg(feature = "redis")]
pub fn share_state(
    builder: crate::ServerBuilder,
    redis_url: Option<&str>,
) -> Result<crate::ServerBuilder, crate::Error> {
    let Some(url) = redis_url else {
        return Ok(builder);
    };
    let redis = crate::redis::Redis::connect(url, crate::redis::RedisOptions::default())?;
    Ok(redis.share(builder))
}

/// The Streamable HTTP options as a host hands them over, read and checked in one place. The
/// bearer-token validator is the host's own callback, so each binding adds it to the result.
#[cfg(feature = "http")]
#[derive(Clone, Debug, Default)]
pub struct HttpSettings {
    /// The endpoint path (default `/mcp`).
    pub path: Option<String>,
    /// No sessions: each POST stands alone.
    pub stateless: bool,
    /// How answers are sent (default [`ResponseMode::Auto`](crate::transport::http::ResponseMode::Auto)).
    pub response_mode: Option<crate::transport::http::ResponseMode>,
    /// The official SDKs' switch for JSON answers: the same as a `Json` response mode.
    pub json_response: bool,
    /// Accepted `Host` values (empty: the default rule).
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (empty: the default rule).
    pub allowed_origins: Vec<String>,
    /// Live sessions at most.
    pub max_sessions: Option<usize>,
    /// Live sessions one client (token subject, else peer address) may hold.
    pub max_sessions_per_client: Option<usize>,
    /// Idle sessions end after this many milliseconds; 0: never.
    pub session_idle_timeout_ms: Option<u64>,
    /// Milliseconds a client may take to send a request's head (also a kept-alive
    /// connection's idle limit); 0: no limit.
    pub header_read_timeout_ms: Option<u64>,
    /// Milliseconds a client may take to send a request's body; 0: no limit.
    pub body_read_timeout_ms: Option<u64>,
    /// Open connections at most.
    pub max_connections: Option<usize>,
    /// Bytes that may wait for one slow SSE reader before its connection is let go.
    pub max_sse_buffered_bytes: Option<usize>,
    /// Serve the Prometheus metrics to `GET` on this path (default: not served).
    pub metrics_path: Option<String>,
}

#[cfg(feature = "http")]
impl HttpSettings {
    /// The transport's options; `json_response` beside another response mode is refused.
    pub fn into_options(self) -> Result<crate::transport::http::HttpOptions, crate::Error> {
        use crate::transport::http::{HttpOptions, ResponseMode};
        let mut options = HttpOptions::default();
        if let Some(path) = self.path {
            options.path = path;
        }
        options.stateless = self.stateless;
        options.response_mode = match (self.response_mode, self.json_response) {
            (None, false) => ResponseMode::Auto,
            (None, true) | (Some(ResponseMode::Json), _) => ResponseMode::Json,
            (Some(mode), false) => mode,
            (Some(mode), true) => {
                return Err(crate::Error::InvalidArgument(format!(
                    "JSON answers asked for beside the {:?} response mode: give one of them",
                    mode.as_str()
                )));
            }
        };
        options.allowed_hosts = self.allowed_hosts;
        options.allowed_origins = self.allowed_origins;
        options.metrics_path = self.metrics_path;
        if let Some(limit) = self.max_sessions {
            options.max_sessions = limit;
        }
        if let Some(limit) = self.max_sessions_per_client {
            if limit == 0 {
                return Err(crate::Error::InvalidArgument(
                    "max_sessions_per_client must be at least 1".into(),
                ));
            }
            options.max_sessions_per_client = limit;
        }
        let limit = |ms: u64| (ms > 0).then(|| std::time::Duration::from_millis(ms));
        if let Some(ms) = self.session_idle_timeout_ms {
            options.session_idle_timeout = limit(ms);
        }
        if let Some(ms) = self.header_read_timeout_ms {
            options.header_read_timeout = limit(ms);
        }
        if let Some(ms) = self.body_read_timeout_ms {
            options.body_read_timeout = limit(ms);
        }
        if let Some(connections) = self.max_connections {
            if connections == 0 {
                return Err(crate::Error::InvalidArgument(
                    "max_connections must be at least 1".into(),
                ));
            }
            options.max_connections = connections;
        }
        if let Some(bytes) = self.max_sse_buffered_bytes {
            if bytes == 0 {
                return Err(crate::Error::InvalidArgument(
                    "max_sse_buffered_bytes must be at least 1".into(),
                ));
            }
            options.max_sse_buffered_bytes = bytes;
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::HttpSettings;
    use crate::transport::http::ResponseMode;

    #[test]
    fn http_settings_read_the_response_mode_once() {
        let mode = |settings: HttpSettings| settings.into_options().map(|o| o.response_mode);
        assert_eq!(mode(HttpSettings::default()).ok(), Some(ResponseMode::Auto));
        let json = HttpSettings {
            json_response: true,
            ..HttpSettings::default()
        };
        assert_eq!(mode(json).ok(), Some(ResponseMode::Json));
        let sse = HttpSettings {
            response_mode: Some(ResponseMode::Sse),
            ..HttpSettings::default()
        };
        assert_eq!(mode(sse).ok(), Some(ResponseMode::Sse));
        let both = HttpSettings {
            response_mode: Some(ResponseMode::Sse),
            json_response: true,
            ..HttpSettings::default()
        };
        assert!(
            mode(both).is_err(),
            "SSE and json_response contradict each other"
        );
        assert_eq!(ResponseMode::parse("sse").ok(), Some(ResponseMode::Sse));
        assert!(ResponseMode::parse("SSE").is_err());
    }

    #[test]
    fn http_settings_zero_idle_timeout_turns_reaping_off() {
        let options = HttpSettings {
            session_idle_timeout_ms: Some(0),
            header_read_timeout_ms: Some(0),
            body_read_timeout_ms: Some(250),
            max_connections: Some(7),
            max_sessions: Some(3),
            max_sessions_per_client: Some(2),
            max_sse_buffered_bytes: Some(4096),
            path: Some("/x".into()),
            ..HttpSettings::default()
        }
        .into_options()
        .expect("valid settings");
        assert_eq!(options.session_idle_timeout, None);
        assert_eq!(options.header_read_timeout, None);
        assert_eq!(
            options.body_read_timeout,
            Some(std::time::Duration::from_millis(250))
        );
        assert_eq!(options.max_connections, 7);
        let no_connections = HttpSettings {
            max_connections: Some(0),
            ..HttpSettings::default()
        };
        assert!(no_connections.into_options().is_err());
        let no_sessions = HttpSettings {
            max_sessions_per_client: Some(0),
            ..HttpSettings::default()
        };
        assert!(no_sessions.into_options().is_err());
        assert_eq!(options.max_sessions, 3);
        assert_eq!(options.max_sessions_per_client, 2);
        assert_eq!(options.max_sse_buffered_bytes, 4096);
        let no_buffer = HttpSettings {
            max_sse_buffered_bytes: Some(0),
            ..HttpSettings::default()
        };
        assert!(no_buffer.into_options().is_err());
        assert_eq!(options.path, "/x");
    }
}
