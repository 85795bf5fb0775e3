//! The threads that run Python for the engine: sync tool handlers, resource, prompt and
//! completion functions, and the hand-over of results to asyncio.
//!
//! Each thread enters Python once and keeps its thread state for its whole life, leaving the
//! GIL while it waits for work. A thread that entered Python per call (tokio's blocking pool)
//! would make and free a thread state and its frame stack on every call, and that pool grows
//! towards 512 threads under steady load (a new one whenever a call finds none idle), each
//! keeping its stack and allocator caches: resident memory crept up over millions of calls.
//! Here the number is bounded: a new thread starts only when work waits with none idle, up to
//! the limit (by default Python's own for a `ThreadPoolExecutor`, min(32, CPUs + 4); a
//! `Server(sync_handler_threads=N)` raises it for the process). Past it, work waits for a
//! thread. The GIL lets one thread run Python at a time, so more threads help only handlers
//! that wait on I/O with the GIL released; measured on 2 cores, 64 threads served a pipelined
//! echo no faster than 6 and held 2.7 MiB more, still growing (glibc arenas and thread caches).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;

/// The most threads any server may ask for.
pub(crate) const MAX_THREADS: usize = 1024;

/// Python's default for a `ThreadPoolExecutor`: min(32, CPUs + 4).
fn default_limit() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cpus + 4).min(32)
}

/// Lets up to `threads` run Python work at once in this process (never fewer than before).
pub(crate) fn allow_threads(wanted: usize) -> Result<(), String> {
    if !(1..=MAX_THREADS).contains(&wanted) {
        return Err(format!(
            "sync_handler_threads must be between 1 and {MAX_THREADS}, not {wanted}"
        ));
    }
    threads().limit.fetch_max(wanted, Ordering::AcqRel);
    Ok(())
}

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

struct Threads {
    sender: Mutex<Sender<Job>>,
    jobs: Mutex<Receiver<Job>>,
    /// Threads started (and not failed to start).
    started: AtomicUsize,
    /// How many may be started.
    limit: AtomicUsize,
    /// Threads waiting for work.
    idle: AtomicUsize,
    /// Work handed over and not yet taken by a thread.
    waiting: AtomicUsize,
}

fn threads() -> &'static Threads {
    static THREADS: OnceLock<Threads> = OnceLock::new();
    THREADS.get_or_init(|| {
        let (sender, jobs) = channel();
        Threads {
            sender: Mutex::new(sender),
            jobs: Mutex::new(jobs),
            started: AtomicUsize::new(0),
            limit: AtomicUsize::new(default_limit()),
            idle: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
        }
    })
}

/// Runs `work` on a Python thread; resolves to its result, or to why there is none.
pub(crate) async fn run_python<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Python<'_>) -> T + Send + 'static,
{
    let (done, result) = tokio::sync::oneshot::channel();
    threads().submit(Box::new(move |py| {
        // The caller may have gone (a cancelled call): the result is then dropped.
        let _ = done.send(work(py));
    }))?;
    result
        .await
        .map_err(|_| "the Python work panicked before it returned".to_owned())
}

impl Threads {
    fn submit(&'static self, job: Job) -> Result<(), String> {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let sent = lock(&self.sender).send(job);
        if sent.is_err() {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err("the Python threads are gone".to_owned());
        }
        if self.waiting.load(Ordering::Acquire) > self.idle.load(Ordering::Acquire) {
            self.start_one()?;
        }
        Ok(())
    }

    /// One more thread, unless the limit is reached. Fails only when there is no thread at all
    /// to take the work.
    fn start_one(&'static self) -> Result<(), String> {
        let mut started = self.started.load(Ordering::Acquire);
        loop {
            if started >= self.limit.load(Ordering::Acquire) {
                return Ok(());
            }
            match self.started.compare_exchange(
                started,
                started + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => started = now,
            }
        }
        let spawned = std::thread::Builder::new()
            .name("toolwire-python".into())
            .spawn(move || self.serve());
        match spawned {
            Ok(_) => Ok(()),
            Err(err) => {
                let left = self.started.fetch_sub(1, Ordering::AcqRel) - 1;
                tracing::error!("cannot start a thread for Python work: {err}");
                if left == 0 {
                    return Err(format!("cannot start a thread for Python work: {err}"));
                }
                Ok(())
            }
        }
    }

    /// A thread's life: in Python throughout, without the GIL while it waits.
    fn serve(&self) {
        Python::attach(|py| {
            while let Some(job) = py.detach(|| self.next_job()) {
                // A panic in the work drops its result sender (the caller hears of it);
                // the thread goes on.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(py)));
            }
        });
    }

    fn next_job(&self) -> Option<Job> {
        self.idle.fetch_add(1, Ordering::AcqRel);
        let job = lock(&self.jobs).recv().ok();
        self.idle.fetch_sub(1, Ordering::AcqRel);
        if job.is_some() {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        job
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
