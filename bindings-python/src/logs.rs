//! The engine's own logs for Python's `logging`: core queues them (bounded), and a Python
//! thread (`toolwire._logs`) takes them here, waiting without the GIL, and logs them. Nothing
//! here calls into Python from an engine thread. Levels are converted both ways here.

use std::time::Duration;

use pyo3::prelude::*;
use toolwire::logs::{self, Level};

/// The most records one call hands over.
const BATCH: usize = 256;

/// `logging`'s number for an engine level (TRACE has none: 5, under DEBUG).
fn python_level(level: Level) -> i32 {
    match level {
        Level::Error => 40,
        Level::Warn => 30,
        Level::Info => 20,
        Level::Debug => 10,
        Level::Trace => 5,
    }
}

/// The most verbose engine level a logger at `python` (its effective level) lets through.
fn engine_level(python: i64) -> Option<Level> {
    match python {
        ..=5 => Some(Level::Trace),
        6..=10 => Some(Level::Debug),
        11..=20 => Some(Level::Info),
        21..=30 => Some(Level::Warn),
        31..=40 => Some(Level::Error),
        41.. => None,
    }
}

/// Installs the engine's subscriber: stderr as `TOOLWIRE_LOG` says, and the drain (off until
/// `set_log_level`).
pub(crate) fn init() {
    logs::init_with_drain(None);
}

/// Makes the engine log what a logger at effective level `level` would keep.
#[pyfunction]
pub(crate) fn set_log_level(level: i64) {
    logs::set_max_level(engine_level(level));
}

/// The engine's records waiting (up to a batch), as `(logging level, target, message)`,
/// waiting up to `timeout` seconds for the first without the GIL: an empty list when none
/// came, `None` once the drain is closed and empty.
#[pyfunction]
pub(crate) fn next_logs(py: Python<'_>, timeout: f64) -> Option<Vec<(i32, String, String)>> {
    // NaN and negative wait not at all; too long for a Duration waits without end.
    let timeout = Duration::try_from_secs_f64(timeout.max(0.0)).unwrap_or(Duration::MAX);
    let records = py.detach(|| {
        let drain = logs::drain();
        match drain.recv_timeout(timeout) {
            Some(first) => {
                let mut records = vec![first];
                records.extend(drain.take(BATCH - 1));
                Some(records)
            }
            None if drain.is_closed() => None,
            None => Some(Vec::new()),
        }
    })?;
    Some(
        records
            .into_iter()
            .map(|record| (python_level(record.level), record.target, record.message))
            .collect(),
    )
}

/// Ends the drain for the rest of the process (at exit): nothing more is queued, and
/// `next_logs` returns what is left, then `None`.
#[pyfunction]
pub(crate) fn close_logs() {
    logs::drain().close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_both_ways() {
        for level in [
            Level::Error,
            Level::Warn,
            Level::Info,
            Level::Debug,
            Level::Trace,
        ] {
            assert_eq!(engine_level(i64::from(python_level(level))), Some(level));
        }
        assert_eq!(engine_level(0), Some(Level::Trace));
        assert_eq!(engine_level(15), Some(Level::Info));
        assert_eq!(engine_level(50), None);
    }
}
