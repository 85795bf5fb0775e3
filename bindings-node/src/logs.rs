//! The engine's own logs into JavaScript: a thread of ours empties core's bounded log drain and
//! hands the records, in batches, to the handler `onEngineLog` set, on the JS thread (a weak
//! threadsafe function: it never keeps the process alive). Core queues rather than calls us:
//! an engine thread never waits for the JS thread.

use std::sync::{Mutex, Once};
use std::time::Duration;

use napi::Status;
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use toolwire::logs::{self, Level};

/// One engine log record, as JavaScript sees it.
#[napi_derive::napi(object)]
pub struct EngineLogRecord {
    /// `'error'`, `'warn'`, `'info'`, `'debug'` or `'trace'`.
    pub level: String,
    /// The Rust module it comes from, `toolwire::…` for the engine's own.
    pub target: String,
    pub message: String,
}

/// Batches waiting for the JS thread, at most; past it batches are dropped and counted.
const QUEUED_BATCHES: usize = 16;

type Deliver = ThreadsafeFunction<
    Vec<EngineLogRecord>,
    (),
    Vec<EngineLogRecord>,
    Status,
    false,
    true,
    QUEUED_BATCHES,
>;

/// The handler now set. One thread, started with the first, serves every handler in turn:
/// two would race for the queue's records (and one of them would hold a stale handler).
static HANDLER: Mutex<Option<Deliver>> = Mutex::new(None);
static PUMP: Once = Once::new();

/// Records handed to JavaScript in one turn, at most.
const BATCH: usize = 256;

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warn => "warn",
        Level::Info => "info",
        Level::Debug => "debug",
        Level::Trace => "trace",
    }
}

fn level_of(name: &str) -> napi::Result<Level> {
    Ok(match name {
        "error" => Level::Error,
        "warn" => Level::Warn,
        "info" => Level::Info,
        "debug" => Level::Debug,
        "trace" => Level::Trace,
        other => {
            return Err(napi::Error::new(
                Status::InvalidArg,
                format!("unknown engine log level {other:?} (error, warn, info, debug or trace)"),
            ));
        }
    })
}

fn handler_lock() -> std::sync::MutexGuard<'static, Option<Deliver>> {
    HANDLER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Sends the engine's log records at `level` and above to `handler(records)`; `null` stops.
#[napi_derive::napi]
pub fn set_engine_log_handler(
    handler: Option<Function<'_, Vec<EngineLogRecord>, ()>>,
    level: Option<String>,
) -> napi::Result<()> {
    let Some(handler) = handler else {
        logs::set_max_level(None);
        *handler_lock() = None;
        return Ok(());
    };
    let level = level_of(level.as_deref().unwrap_or("info"))?;
    let deliver: Deliver = handler
        .build_threadsafe_function::<Vec<EngineLogRecord>>()
        .callee_handled::<false>()
        .weak::<true>()
        .max_queue_size::<QUEUED_BATCHES>()
        .build()?;
    *handler_lock() = Some(deliver);
    let mut started = Ok(());
    PUMP.call_once(|| {
        started = std::thread::Builder::new()
            .name("toolwire-logs".into())
            .spawn(pump)
            .map(drop);
    });
    started
        .map_err(|err| napi::Error::from_reason(format!("cannot start the log thread: {err}")))?;
    logs::set_max_level(Some(level));
    Ok(())
}

/// Empties the drain into the handler set at the time, for the rest of the process.
fn pump() {
    let drain = logs::drain();
    let mut dropped: usize = 0;
    loop {
        let Some(first) = drain.recv_timeout(Duration::from_secs(3600)) else {
            if drain.is_closed() {
                return;
            }
            continue;
        };
        let mut records = Vec::with_capacity(BATCH + 1);
        if dropped > 0 {
            records.push(EngineLogRecord {
                level: "warn".to_owned(),
                target: logs::DROPPED_TARGET.to_owned(),
                message: format!(
                    "toolwire: {dropped} log records dropped (the JavaScript handler did not keep up)"
                ),
            });
        }
        let batch = std::iter::once(first).chain(drain.take(BATCH - 1));
        records.extend(batch.map(|record| EngineLogRecord {
            level: level_name(record.level).to_owned(),
            target: record.target,
            message: record.message,
        }));
        // The engine's records in it (not the warning, whose count stays in `dropped`).
        let count = records.len() - usize::from(dropped > 0);
        let guard = handler_lock();
        // No handler (it was just turned off): these records have nowhere to go.
        let Some(deliver) = guard.as_ref() else {
            continue;
        };
        let status = deliver.call(records, ThreadsafeFunctionCallMode::NonBlocking);
        drop(guard);
        // A full queue: this batch is lost, and said so with the next one.
        dropped = if status == Status::QueueFull {
            dropped.saturating_add(count)
        } else {
            0
        };
    }
}
