//! The threads that run Python for the engine: sync tool handlers, resource, prompt and
//! completion functions, and the hand-over of results to asyncio.
//!
//! Each thread enters Python once and keeps its thread state for its whole life, leaving the
//! GIL while it waits for work. A thread that entered Python per call (tokio's blocking pool)
//! would make and free a thread state and its frame stack on every call, and that pool grows
//! towards 512 threads under steady load (a new one whenever a call finds none idle), each
//! keeping its stack and allocator caches: resident memory crept up over millions of calls.
//! Here the number is bounded: a new thread starts only when work waits with none idle, up to
//! [`MAX_THREADS`]; past it, work waits for a thread.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;

/// Python work running at once at most (the GIL lets one run at a time; more help only while
/// handlers wait on I/O with the GIL released). `async def` handlers are not bounded by it.
pub(crate) const MAX_THREADS: usize = 64;

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

struct Threads {
    sender: Mutex<Sender<Job>>,
    jobs: Mutex<Receiver<Job>>,
    /// Threads started (and not failed to start).
    started: AtomicUsize,
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

    /// One more thread, unless there are [`MAX_THREADS`]. Fails only when there is no thread
    /// at all to take the work.
    fn start_one(&'static self) -> Result<(), String> {
        let mut started = self.started.load(Ordering::Acquire);
        loop {
            if started >= MAX_THREADS {
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
