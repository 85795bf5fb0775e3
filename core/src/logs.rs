//! The engine's own logs (feature `env-logs`), two ways out:
//!
//! - **stderr**, as the `TOOLWIRE_LOG` environment variable asks: `level` or `target=level,…`
//!   (tracing's `Targets` syntax). Stdout is left to the protocol.
//! - **a bounded drain** for a host's logging (Python's `logging`, SLF4J…): each event at or
//!   above [`set_max_level`]'s level becomes a [`LogRecord`] in a process-wide queue that a host
//!   thread empties with [`LogDrain::recv_timeout`]. A queue, not a callback into the host:
//!   an engine thread that took the host's lock (the GIL) to log would deadlock against a host
//!   thread holding that lock while it waits for the engine. The queue holds [`CAPACITY`]
//!   records of at most [`MAX_MESSAGE`] bytes each; past that, records are dropped and
//!   counted, and the next record queued is preceded by a warning saying how many were lost.
//!
//! [`init_from_env`] installs the stderr path alone (binaries); [`init_with_drain`] installs
//! both (bindings). The drain is off until [`set_max_level`] turns it on; off, an event costs
//! what a disabled `tracing` event costs (the level check of the callsite, cached).

use std::collections::VecDeque;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tracing::subscriber::Interest;
use tracing::{Event, Metadata};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, Filter, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// How many records the drain holds before it drops new ones.
pub const CAPACITY: usize = 1024;

/// The longest message a record keeps (in bytes; a longer one is cut, and ends with `…`).
pub const MAX_MESSAGE: usize = 16 * 1024;

/// The target of the warning that announces dropped records.
pub const DROPPED_TARGET: &str = "toolwire::logs";

/// Installs a stderr subscriber filtered by `TOOLWIRE_LOG`, or by `default` when it is unset or
/// unreadable (`None`: then nothing is installed). A subscriber already installed is kept.
pub fn init_from_env(default: Option<tracing::Level>) {
    let Some(filter) = env_targets(default) else {
        return;
    };
    let _ = tracing_subscriber::registry()
        .with(stderr_layer())
        .with(filter)
        .try_init();
}

pub(crate) fn stderr_layer<S>() -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
}

/// Installs the process's subscriber with the drain (off until [`set_max_level`]) and, when
/// `TOOLWIRE_LOG` is set (or `default` is given), the stderr output [`init_from_env`] makes:
/// the two are independent, each with its own level. Returns `false` when a subscriber was
/// already installed (by the host, or by an earlier call): then this one is not, and the drain
/// is fed only if that earlier call was this function.
pub fn init_with_drain(default: Option<tracing::Level>) -> bool {
    let stderr = env_targets(default).map(|filter| stderr_layer().with_filter(filter));
    tracing_subscriber::registry()
        .with(stderr)
        .with(drain_layer(&SHARED))
        .try_init()
        .is_ok()
}

pub(crate) fn env_targets(default: Option<tracing::Level>) -> Option<Targets> {
    std::env::var("TOOLWIRE_LOG")
        .ok()
        .and_then(|spec| spec.parse::<Targets>().ok())
        .or_else(|| default.map(|level| Targets::new().with_default(level)))
}

/// A record's level, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Something failed.
    Error = 1,
    /// Something is wrong but the engine went on.
    Warn = 2,
    /// What the engine is doing, briefly (serving started…).
    Info = 3,
    /// Details for whoever looks into a problem.
    Debug = 4,
    /// Even more details.
    Trace = 5,
}

impl Level {
    /// The level of a `tracing` event.
    pub fn from_tracing(level: tracing::Level) -> Level {
        match level {
            tracing::Level::ERROR => Level::Error,
            tracing::Level::WARN => Level::Warn,
            tracing::Level::INFO => Level::Info,
            tracing::Level::DEBUG => Level::Debug,
            _ => Level::Trace,
        }
    }

    /// The level for its number (1 = error … 5 = trace); `None` for any other number.
    pub fn from_number(number: u8) -> Option<Level> {
        match number {
            1 => Some(Level::Error),
            2 => Some(Level::Warn),
            3 => Some(Level::Info),
            4 => Some(Level::Debug),
            5 => Some(Level::Trace),
            _ => None,
        }
    }

    /// Its number: 1 = error … 5 = trace.
    pub fn number(self) -> u8 {
        self as u8
    }

    fn filter(level: Option<Level>) -> LevelFilter {
        match level {
            None => LevelFilter::OFF,
            Some(Level::Error) => LevelFilter::ERROR,
            Some(Level::Warn) => LevelFilter::WARN,
            Some(Level::Info) => LevelFilter::INFO,
            Some(Level::Debug) => LevelFilter::DEBUG,
            Some(Level::Trace) => LevelFilter::TRACE,
        }
    }
}

/// One of the engine's log events, for a host's logging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its level.
    pub level: Level,
    /// Where it comes from: a Rust module path, `toolwire::…` for the engine's.
    pub target: String,
    /// The event's message, then its other fields as ` key=value`.
    pub message: String,
}

/// The process's drain: what [`init_with_drain`] feeds and [`drain`] empties.
static SHARED: Shared = Shared::new(CAPACITY);

/// Sets the most verbose level the drain takes (`None`: it takes nothing, and disabled events
/// cost next to nothing). Takes effect at once, for every thread.
pub fn set_max_level(level: Option<Level>) {
    SHARED.set_level(level);
}

/// The drain's level, as [`set_max_level`] last set it.
pub fn max_level() -> Option<Level> {
    SHARED.level()
}

/// The host's end of the process's log queue. Every handle takes from the same queue: one host
/// thread should drain it. Blocking calls must be made without the host's lock (the GIL).
pub fn drain() -> LogDrain {
    LogDrain { shared: &SHARED }
}

/// A drain: its level, its queue.
struct Shared {
    /// 0 = off, else [`Level::number`].
    level: AtomicU8,
    records: Mutex<VecDeque<LogRecord>>,
    ready: Condvar,
    capacity: usize,
    /// Records dropped (the queue was full) and not yet announced.
    dropped: AtomicU64,
    closed: AtomicBool,
}

impl Shared {
    const fn new(capacity: usize) -> Shared {
        Shared {
            level: AtomicU8::new(0),
            records: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            capacity,
            dropped: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    fn set_level(&self, level: Option<Level>) {
        let number = level.map_or(0, Level::number);
        if self.level.swap(number, Ordering::AcqRel) != number {
            // Callsites cached their interest for the old level: ask them again.
            tracing::callsite::rebuild_interest_cache();
        }
    }

    fn level(&self) -> Option<Level> {
        Level::from_number(self.level.load(Ordering::Acquire))
    }

    fn takes(&self, meta: &Metadata<'_>) -> bool {
        meta.is_event()
            && Level::from_tracing(*meta.level()).number() <= self.level.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<LogRecord>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, record: LogRecord) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        let mut records = self.lock();
        let dropped = self.dropped.load(Ordering::Acquire);
        // Dropped records are announced in their place, before the record that follows them:
        // that needs room for both.
        let needed = if dropped > 0 { 2 } else { 1 };
        if records.len() + needed > self.capacity {
            self.dropped.fetch_add(1, Ordering::AcqRel);
            return;
        }
        if dropped > 0 {
            self.dropped.store(0, Ordering::Release);
            records.push_back(dropped_record(dropped));
        }
        records.push_back(record);
        drop(records);
        self.ready.notify_one();
    }
}

fn dropped_record(count: u64) -> LogRecord {
    LogRecord {
        level: Level::Warn,
        target: DROPPED_TARGET.to_owned(),
        message: format!(
            "toolwire: {count} log record{} dropped (the host's logger did not keep up)",
            if count == 1 { "" } else { "s" }
        ),
    }
}

/// The layer that feeds `shared`, filtered by its level.
fn drain_layer<S>(shared: &'static Shared) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    DrainLayer(shared).with_filter(DrainFilter(shared))
}

/// The drain's filter: events at or above its level. A callsite below the level is never
/// interesting (the cache is rebuilt when the level changes), so a disabled event is turned
/// away by its callsite without a look at the level.
struct DrainFilter(&'static Shared);

impl<S> Filter<S> for DrainFilter {
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        self.0.takes(meta)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.0.takes(meta) {
            // `sometimes`: `enabled` still looks at the level (one atomic load), in case a
            // change reached this callsite's cached interest late.
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(Level::filter(self.0.level()))
    }
}

/// Turns each event into a [`LogRecord`] in the queue.
struct DrainLayer(&'static Shared);

impl<S: tracing::Subscriber> Layer<S> for DrainLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.push(LogRecord {
            level: Level::from_tracing(*meta.level()),
            target: meta.target().to_owned(),
            message: fields.finish(),
        });
    }
}

/// An event's fields as text: the message, then ` key=value` for each other one.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Fields {
    fn finish(self) -> String {
        let Fields { mut message, rest } = self;
        if message.is_empty() {
            message = rest.trim_start().to_owned();
        } else {
            message.push_str(&rest);
        }
        if message.len() > MAX_MESSAGE {
            let mut end = MAX_MESSAGE;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        message
    }
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        // A field named `message` beside the message (`message = %error.message`) is a field.
        if field.name() == "message" && self.message.is_empty() {
            self.message.push_str(value);
        } else {
            let _ = write!(self.rest, " {}={}", field.name(), value);
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        if field.name() == "message" && self.message.is_empty() {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.rest, " {}={:?}", field.name(), value);
        }
    }
}

/// The host's end of the process's log queue (see [`drain`]).
#[derive(Clone, Copy)]
pub struct LogDrain {
    shared: &'static Shared,
}

impl fmt::Debug for LogDrain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogDrain")
            .field("level", &self.shared.level())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl LogDrain {
    /// The next record, waiting up to `timeout` for one; `None` when none came in time, or at
    /// once when the drain is closed and empty.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<LogRecord> {
        let shared = self.shared;
        let deadline = Instant::now().checked_add(timeout);
        let mut records = shared.lock();
        loop {
            if let Some(record) = records.pop_front() {
                return Some(record);
            }
            if shared.closed.load(Ordering::Acquire) {
                return None;
            }
            let wait = match deadline {
                Some(deadline) => deadline.checked_duration_since(Instant::now())?,
                // A timeout past what the clock holds: wait in long steps.
                None => Duration::from_secs(3600),
            };
            if wait.is_zero() {
                return None;
            }
            records = shared
                .ready
                .wait_timeout(records, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Records waiting, at most `max`, without waiting.
    pub fn take(&self, max: usize) -> Vec<LogRecord> {
        let mut records = self.shared.lock();
        let count = max.min(records.len());
        records.drain(..count).collect()
    }

    /// Stops the drain for the rest of the process (the host is going away): its level goes
    /// to off, nothing more is queued, and waiting calls return once the queue is empty.
    pub fn close(&self) {
        let shared = self.shared;
        shared.set_level(None);
        shared.closed.store(true, Ordering::Release);
        // Taking the lock orders this with a waiter between its check and its wait.
        drop(shared.lock());
        shared.ready.notify_all();
    }

    /// Whether [`LogDrain::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Dispatch;

    /// A drain of its own (not the process's) and a subscriber feeding it, for this thread.
    fn drain_of(capacity: usize, level: Option<Level>) -> (LogDrain, Dispatch) {
        let shared: &'static Shared = Box::leak(Box::new(Shared::new(capacity)));
        let dispatch = Dispatch::new(tracing_subscriber::registry().with(drain_layer(shared)));
        let drain = LogDrain { shared };
        set_level(&drain, &dispatch, level);
        (drain, dispatch)
    }

    /// Sets a test drain's level with its subscriber current: the interest cache is rebuilt
    /// with the current subscriber when it is the only one in the process (a test run alone).
    fn set_level(drain: &LogDrain, dispatch: &Dispatch, level: Option<Level>) {
        tracing::dispatcher::with_default(dispatch, || drain.shared.set_level(level));
    }

    fn record(level: Level, message: &str) -> LogRecord {
        LogRecord {
            level,
            target: "toolwire::test".to_owned(),
            message: message.to_owned(),
        }
    }

    #[test]
    fn records_keep_their_order_and_fields() {
        let (drain, dispatch) = drain_of(16, Some(Level::Debug));
        tracing::dispatcher::with_default(&dispatch, || {
            let reason = "bad frame";
            tracing::warn!(target: "toolwire::test", code = 7, %reason, who = "client", "first");
            tracing::debug!(target: "toolwire::test", ?reason, "second");
            tracing::trace!(target: "toolwire::test", "too verbose");
            tracing::error!(target: "toolwire::test", only = true);
            tracing::warn!(target: "toolwire::test", message = %reason, "the client said");
            tracing::info!("from this module");
        });
        let got: Vec<LogRecord> =
            std::iter::from_fn(|| drain.recv_timeout(Duration::ZERO)).collect();
        assert_eq!(
            got,
            [
                record(Level::Warn, "first code=7 reason=bad frame who=client"),
                record(Level::Debug, "second reason=\"bad frame\""),
                record(Level::Error, "only=true"),
                record(Level::Warn, "the client said message=bad frame"),
                LogRecord {
                    level: Level::Info,
                    target: module_path!().to_owned(),
                    message: "from this module".to_owned(),
                },
            ]
        );
    }

    #[test]
    fn a_full_queue_drops_and_the_next_record_says_how_many() {
        let (drain, dispatch) = drain_of(4, Some(Level::Info));
        tracing::dispatcher::with_default(&dispatch, || {
            for n in 0..7 {
                tracing::info!(target: "toolwire::test", n, "record");
            }
        });
        let kept = drain.take(usize::MAX);
        let numbers: Vec<&str> = kept.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(
            numbers,
            ["record n=0", "record n=1", "record n=2", "record n=3"]
        );
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::info!(target: "toolwire::test", n = 7, "record");
        });
        assert_eq!(
            drain.take(usize::MAX),
            [
                LogRecord {
                    level: Level::Warn,
                    target: DROPPED_TARGET.to_owned(),
                    message: "toolwire: 3 log records dropped (the host's logger did not keep up)"
                        .to_owned(),
                },
                record(Level::Info, "record n=7"),
            ]
        );
        // Announced once.
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::info!(target: "toolwire::test", n = 8, "record");
        });
        assert_eq!(drain.take(usize::MAX), [record(Level::Info, "record n=8")]);
    }

    #[test]
    fn the_level_changes_at_run_time() {
        let (drain, dispatch) = drain_of(16, Some(Level::Warn));
        let emit = |n: u32| {
            tracing::dispatcher::with_default(&dispatch, || {
                tracing::info!(target: "toolwire::test", n, "info");
                tracing::warn!(target: "toolwire::test", n, "warn");
            });
        };
        emit(1);
        set_level(&drain, &dispatch, Some(Level::Info));
        emit(2);
        set_level(&drain, &dispatch, None);
        emit(3);
        set_level(&drain, &dispatch, Some(Level::Error));
        emit(4);
        assert_eq!(
            drain.take(usize::MAX),
            [
                record(Level::Warn, "warn n=1"),
                record(Level::Info, "info n=2"),
                record(Level::Warn, "warn n=2"),
            ]
        );
    }

    #[test]
    fn recv_timeout_waits_for_a_record_from_another_thread() {
        let (drain, dispatch) = drain_of(16, Some(Level::Info));
        let (go, ready) = std::sync::mpsc::channel::<()>();
        let logger = std::thread::spawn(move || {
            // Logs only once the receiver is about to wait.
            let _ = ready.recv();
            tracing::dispatcher::with_default(&dispatch, || {
                tracing::info!(target: "toolwire::test", "from a thread");
            });
        });
        let _ = go.send(());
        assert_eq!(
            drain.recv_timeout(Duration::from_secs(30)),
            Some(record(Level::Info, "from a thread"))
        );
        logger.join().expect("the logging thread");
    }

    #[test]
    fn a_closed_drain_gives_what_is_left_then_none_at_once() {
        let (drain, dispatch) = drain_of(16, Some(Level::Info));
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::info!(target: "toolwire::test", "kept");
        });
        tracing::dispatcher::with_default(&dispatch, || drain.close());
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::error!(target: "toolwire::test", "after the close");
        });
        assert!(drain.is_closed());
        assert_eq!(drain.shared.level(), None);
        assert_eq!(
            drain.recv_timeout(Duration::from_secs(3600)),
            Some(record(Level::Info, "kept"))
        );
        assert_eq!(drain.recv_timeout(Duration::from_secs(3600)), None);
    }

    #[test]
    fn the_process_drain_takes_what_the_installed_subscriber_sees() {
        // Other tests may log through the process's subscriber meanwhile: look for ours.
        init_with_drain(None);
        set_max_level(Some(Level::Warn));
        assert_eq!(max_level(), Some(Level::Warn));
        let other_thread = std::thread::spawn(|| {
            tracing::debug!(target: "toolwire::logs::process", "not taken");
            tracing::warn!(target: "toolwire::logs::process", "taken");
        });
        other_thread.join().expect("the logging thread");
        let ours = std::iter::from_fn(|| drain().recv_timeout(Duration::from_secs(30)))
            .find(|record| record.target == "toolwire::logs::process");
        assert_eq!(
            ours,
            Some(LogRecord {
                level: Level::Warn,
                target: "toolwire::logs::process".to_owned(),
                message: "taken".to_owned(),
            })
        );
    }

    #[test]
    fn long_messages_are_cut() {
        let (drain, dispatch) = drain_of(16, Some(Level::Info));
        let long = "é".repeat(MAX_MESSAGE);
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::info!(target: "toolwire::test", "{long}");
        });
        let got = drain.take(1).pop().expect("the record");
        assert!(got.message.len() <= MAX_MESSAGE + '…'.len_utf8());
        assert!(got.message.starts_with("éé") && got.message.ends_with('…'));
    }

    #[test]
    fn levels_have_numbers() {
        for level in [
            Level::Error,
            Level::Warn,
            Level::Info,
            Level::Debug,
            Level::Trace,
        ] {
            assert_eq!(Level::from_number(level.number()), Some(level));
        }
        assert_eq!(Level::from_number(0), None);
        assert_eq!(Level::from_number(6), None);
        assert_eq!(Level::from_tracing(tracing::Level::TRACE), Level::Trace);
    }
}
