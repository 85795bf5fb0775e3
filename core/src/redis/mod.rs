//! State shared by replicas behind one load balancer, kept in Redis: the tasks (any replica
//! reads, answers and cancels a task another created), the changes (a resource updated on one
//! replica reaches the listen streams and sessions of all), the signals between them (a
//! `tasks/cancel` that arrives at B stops the handler running on A) and legacy sessions' SSE
//! events and records (a client whose replica died goes on with its session on another, and
//! resumes its streams there after `Last-Event-ID`).
//!
//! ```no_run
//! # fn main() -> Result<(), toolwire::Error> {
//! let redis = toolwire::redis::Redis::connect("redis://127.0.0.1:6379/0", Default::default())?;
//! let server = redis.share(toolwire::Server::builder("demo", "1.0.0")).build()?;
//! # drop(server); Ok(()) }
//! ```
//!
//! Every replica also needs the same `requestState` keys
//! ([`StateKeys::from_secrets`](crate::StateKeys::from_secrets)), so an MRTR round sealed by one
//! opens on another.
//!
//! Failure: [`Redis::connect`] fails at once, with the reason, when Redis cannot be reached.
//! While serving, a lost Redis makes task operations answer -32603 ("the task store cannot be
//! reached") and new `subscriptions/listen` streams -32603, open ones end gracefully (clients
//! listen again); calls that need neither keep working, and everything recovers when Redis
//! returns. A replica that dies mid-task stops renewing the task's lease, and any replica then
//! ends the task `failed`.
//!
//! The task store uses blocking connections (its trait is synchronous: it is called under the
//! engine's locks), each command bounded by [`RedisOptions::command_timeout`]; on a
//! multi-threaded runtime the call steps out of the runtime first (`block_in_place`).

mod changes;
#[cfg(feature = "http")]
mod events;
mod tasks;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use crate::Error;
use crate::changes::Change;
use crate::tasks::TaskSignal;

pub use changes::RedisChangeBus;
#[cfg(feature = "http")]
pub use events::RedisEventStore;
pub use tasks::{LAPSED_MESSAGE, RedisTaskStore};

/// How a server uses Redis.
#[derive(Clone, Debug)]
pub struct RedisOptions {
    /// Every key and channel starts with it, so several servers can share one Redis.
    pub prefix: String,
    /// How long a task whose replica stops renewing it (renewed every second) stays `working`
    /// before another replica ends it `failed`.
    pub task_lease: Duration,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long one command may take before it counts as Redis being unreachable.
    pub command_timeout: Duration,
    /// Changes a slow feed may fall behind by before it skips some (see
    /// [`LocalChangeBus`](crate::changes::LocalChangeBus)).
    pub change_capacity: usize,
    /// The newest events kept of each legacy SSE stream, for resumption.
    pub max_events_per_stream: usize,
    /// How long a legacy session's record and events are kept after its last event.
    pub session_ttl: Duration,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            prefix: "toolwire".into(),
            task_lease: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            command_timeout: Duration::from_secs(2),
            change_capacity: crate::changes::LocalChangeBus::DEFAULT_CAPACITY,
            max_events_per_stream: 1024,
            session_ttl: Duration::from_secs(3600),
        }
    }
}

/// A connection to Redis shared by a server's task store and change bus.
#[derive(Clone)]
pub struct Redis {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.shared.options.prefix)
            .finish_non_exhaustive()
    }
}

struct Shared {
    client: redis::Client,
    options: RedisOptions,
    /// Idle blocking connections (a command takes one, or opens one, and gives it back).
    idle: Mutex<Vec<redis::Connection>>,
    /// Changes heard from Redis, for this process's feeds. Replaced (ending every feed) when
    /// the subscription is lost: changes may have been missed, and listeners start over.
    changes: Mutex<broadcast::Sender<Change>>,
    /// Signals to tasks heard from Redis.
    signals: broadcast::Sender<TaskSignal>,
    /// Changes to publish, in order (publishing never blocks the publisher).
    outbox: mpsc::Sender<Change>,
    /// Whether the subscription is up now.
    subscribed: std::sync::atomic::AtomicBool,
}

/// The most idle blocking connections kept.
const MAX_IDLE: usize = 16;
/// Changes waiting to be published before more are dropped (with a warning).
const OUTBOX: usize = 4096;

impl Redis {
    /// Connects to `url` (`redis://[:password@]host:port/db`) and checks that Redis answers;
    /// starts the subscription on the current runtime, or on the engine's
    /// ([`host::runtime`](crate::host::runtime)) outside one. Fails with the reason when Redis
    /// cannot be reached.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Redis, Error> {
        let client = redis::Client::open(url)
            .map_err(|err| Error::InvalidArgument(format!("Redis URL {url:?}: {err}")))?;
        let (outbox, queued) = mpsc::channel(OUTBOX);
        let shared = Arc::new(Shared {
            client,
            idle: Mutex::new(Vec::new()),
            changes: Mutex::new(broadcast::Sender::new(options.change_capacity.max(1))),
            signals: broadcast::Sender::new(1024),
            outbox,
            subscribed: std::sync::atomic::AtomicBool::new(false),
            options,
        });
        // A clear error at start: nothing is served on a store that is not there.
        let pong: String = shared
            .command(|con| redis::cmd("PING").query(con))
            .map_err(|err| unreachable(url, &err))?;
        if pong != "PONG" {
            return Err(Error::InvalidArgument(format!(
                "{url}: answered PING with {pong:?}, not PONG; is it Redis?"
            )));
        }
        let runtime = tokio::runtime::Handle::try_current()
            .unwrap_or_else(|_| crate::runtime::runtime().handle().clone());
        runtime.spawn(changes::publish(Arc::downgrade(&shared), queued));
        let (subscribed, ready) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(changes::subscribe(Arc::downgrade(&shared), subscribed));
        // Subscribed before serving, so no change published from now on is missed. A
        // single-threaded runtime cannot subscribe while this thread waits: there the
        // subscription follows as soon as the runtime runs (listen is refused until then).
        if runtime.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread {
            let wait = shared.options.connect_timeout + shared.options.command_timeout;
            if off_runtime(|| ready.recv_timeout(wait)).is_err() {
                return Err(Error::Transport(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("{url}: answered PING but no subscription within {wait:?}"),
                )));
            }
        }
        Ok(Redis { shared })
    }

    /// The task store on this connection.
    pub fn task_store(&self) -> Arc<RedisTaskStore> {
        Arc::new(RedisTaskStore::new(self.shared.clone()))
    }

    /// The change bus on this connection.
    pub fn change_bus(&self) -> Arc<RedisChangeBus> {
        Arc::new(RedisChangeBus::new(self.shared.clone()))
    }

    /// The store of legacy sessions' SSE events and records on this connection (give it to
    /// [`ServerBuilder::event_store`](crate::ServerBuilder::event_store)).
    #[cfg(feature = "http")]
    pub fn event_store(&self) -> Arc<RedisEventStore> {
        Arc::new(RedisEventStore::new(self.shared.clone()))
    }

    /// `builder` with its tasks, changes and (with Streamable HTTP) legacy sessions' events
    /// all kept here.
    pub fn share(&self, builder: crate::ServerBuilder) -> crate::ServerBuilder {
        let builder = builder
            .task_store(self.task_store())
            .change_bus(self.change_bus());
        #[cfg(feature = "http")]
        let builder = builder.event_store(self.event_store());
        builder
    }
}

fn unreachable(url: &str, err: &Error) -> Error {
    let why = match err {
        Error::Transport(io) => io.to_string(),
        other => other.to_string(),
    };
    Error::Transport(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("{url} cannot be reached ({why})"),
    ))
}

/// A Redis failure as the engine's error.
fn transport(err: redis::RedisError) -> Error {
    Error::Transport(std::io::Error::other(format!("Redis: {err}")))
}

impl Shared {
    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.options.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    /// Runs `f` on a blocking connection, stepping out of a multi-threaded runtime first.
    fn command<T>(
        &self,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        off_runtime(|| {
            let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(con) = pooled else {
                return self.run(self.open()?, &mut f).map_err(transport);
            };
            match self.run(con, &mut f) {
                // An idle connection found closed (Redis restarted, or closed it as idle): the
                // others are as stale, and the command never reached a live Redis, so it goes
                // once more on a new connection instead of failing the request.
                Err(err) if err.is_connection_dropped() => {
                    self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    self.run(self.open()?, &mut f).map_err(transport)
                }
                answer => answer.map_err(transport),
            }
        })
    }

    /// Runs `f` on `con`, then keeps `con` for the next command unless it failed.
    fn run<T>(
        &self,
        mut con: redis::Connection,
        f: &mut impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let answer = f(&mut con);
        match &answer {
            // A connection that failed may be half-read: dropped, never reused.
            Err(err) if err.is_io_error() || err.is_timeout() || err.is_connection_dropped() => {}
            _ => {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                if idle.len() < MAX_IDLE {
                    idle.push(con);
                }
            }
        }
        answer
    }

    fn open(&self) -> Result<redis::Connection, Error> {
        let con = self
            .client
            .get_connection_with_timeout(self.options.connect_timeout)
            .map_err(transport)?;
        let timeout = Some(self.options.command_timeout);
        con.set_read_timeout(timeout).map_err(transport)?;
        con.set_write_timeout(timeout).map_err(transport)?;
        Ok(con)
    }

    fn changes_channel(&self) -> String {
        self.key(&["changes"])
    }

    fn signals_channel(&self) -> String {
        self.key(&["signals"])
    }
}

/// Blocking work from async code: on a multi-threaded runtime's thread the runtime hands its
/// other tasks to another worker first; elsewhere (a host's thread, no runtime) it just runs.
fn off_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
