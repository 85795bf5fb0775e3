//! The threads that run Python for the engine: sync tool handlers and resource, prompt and
//! completion functions on one set, and the hand-over of results to asyncio on another.
//!
//! Each thread enters Python once and keeps its thread state for its whole life, leaving the
//! GIL while it waits for work. A thread that entered Python per call (tokio's blocking pool)
//! would make and free a thread state and its frame stack on every call, and that pool grows
//! towards 512 threads under steady load (a new one whenever a call finds none idle), each
//! keeping its stack and allocator caches: resident memory crept up over millions of calls.
//! Here the number is bounded: a new thread starts only when work waits with none idle, up to
//! the limit. For handlers that is Python's own for a `ThreadPoolExecutor`, min(32, CPUs + 4),
//! and a `Server(sync_handler_threads=N)` raises it for the process; past it, work waits for a
//! thread. The GIL lets one thread run Python at a time, so more threads help only handlers that
//! wait on I/O with the GIL released; measured on 2 cores, 64 threads served a pipelined echo no
//! faster than 6 and held 2.7 MiB more, still growing (glibc arenas and thread caches).
//!
//! Results for asyncio have threads of their own: handing one over never blocks, so a few
//! suffice, and an `async def` handler awaiting a client's answer is never stuck behind sync
//! handlers that hold every handler thread (one of them might be waiting for it). Token checks
//! have theirs too (as many as handlers by default): a request is never kept from being
//! authenticated because sync handlers wait on I/O.
//!
//! Python called from the engine's own threads (a tool run in place, middleware, a mounted
//! exchange's outcome) goes through [`attach_kept`], which keeps a thread state there too.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;

/// Runs `work` with the GIL on this thread, keeping the thread's Python thread state for the
/// rest of its life. Plain `Python::attach` on a thread Python never saw makes a thread state
/// and frees it again with its frame stack (an `mmap` and a `munmap`) on every call: measured,
/// that tripled the CPU of a tool run on the engine's thread.
pub(crate) fn attach_kept<T>(work: impl FnOnce(Python<'_>) -> T) -> T {
    // Not while this thread ends (a destructor run by freeing its state may come back here).
    let _ = KEPT.try_with(KeptThreadState::keep);
    Python::attach(work)
}

thread_local! {
    static KEPT: KeptThreadState = const { KeptThreadState(std::cell::Cell::new(None)) };
}

/// A thread state made for this thread, freed when the thread ends (a tokio thread may:
/// the blocking pool's, or a worker replaced by `block_in_place`).
struct KeptThreadState(
    std::cell::Cell<Option<(*mut pyo3::ffi::PyThreadState, pyo3::ffi::PyGILState_STATE)>>,
);

impl KeptThreadState {
    fn keep(&self) {
        if self.0.get().is_some() {
            return;
        }
        // SAFETY: the interpreter is running (Python code registered what calls this). A
        // thread with a thread state (Python's own, or one holding the GIL) is left alone: the
        // GIL is then not held here, so `Ensure` makes a thread state and takes the GIL, and
        // `SaveThread` gives the GIL back keeping the state, which later `PyGILState_Ensure`
        // calls (pyo3's `attach`) find and reuse.
        unsafe {
            if !pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                return;
            }
            let state = pyo3::ffi::PyGILState_Ensure();
            let thread_state = pyo3::ffi::PyEval_SaveThread();
            self.0.set(Some((thread_state, state)));
        }
    }
}

impl Drop for KeptThreadState {
    fn drop(&mut self) {
        if let Some((thread_state, state)) = self.0.take() {
            // SAFETY: this thread made `thread_state` (`keep`) and holds no GIL between calls;
            // restoring it and releasing the `Ensure` frees it. Skipped once the interpreter
            // is gone (its thread states went with it).
            unsafe {
                if pyo3::ffi::Py_IsInitialized() != 0 {
                    pyo3::ffi::PyEval_RestoreThread(thread_state);
                    pyo3::ffi::PyGILState_Release(state);
                }
            }
        }
    }
}

/// The most threads any server may ask for.
pub(crate) const MAX_THREADS: usize = 1024;

/// Threads that hand results over to asyncio.
const DELIVERY_THREADS: usize = 2;

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

struct Threads {
    name: &'static str,
    sender: Mutex<Sender<Job>>,
    jobs: Mutex<Receiver<Job>>,
    /// Threads started (and not failed to start).
    started: AtomicUsize,
    /// How many may be started.
    limit: AtomicUsize,
    /// Threads waiting for work.
    idle: AtomicUsize,
    /// Threads started that have not yet come to wait for work: counted with the idle ones,
    /// so that one job does not start a thread each time it is looked at before one is up.
    starting: AtomicUsize,
    /// Work handed over and not yet taken by a thread.
    waiting: AtomicUsize,
}

/// Python's default for a `ThreadPoolExecutor`: min(32, CPUs + 4).
fn default_limit() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cpus + 4).min(32)
}

fn handler_threads() -> &'static Threads {
    static THREADS: OnceLock<Threads> = OnceLock::new();
    THREADS.get_or_init(|| Threads::new("toolwire-python", default_limit()))
}

fn auth_threads() -> &'static Threads {
    static THREADS: OnceLock<Threads> = OnceLock::new();
    THREADS.get_or_init(|| Threads::new("toolwire-auth", default_limit()))
}

fn delivery_threads() -> &'static Threads {
    static THREADS: OnceLock<Threads> = OnceLock::new();
    THREADS.get_or_init(|| Threads::new("toolwire-asyncio", DELIVERY_THREADS))
}

/// Lets up to `wanted` handlers run at once in this process (never fewer than before).
pub(crate) fn allow_threads(wanted: usize) -> Result<(), String> {
    check_threads(wanted)?;
    let threads = handler_threads();
    threads.limit.fetch_max(wanted, Ordering::AcqRel);
    // Work may be waiting for a thread the old limit did not allow.
    threads.start_for_waiting_work()
}

/// Whether `wanted` is a thread count a server may ask for.
pub(crate) fn check_threads(wanted: usize) -> Result<(), String> {
    if (1..=MAX_THREADS).contains(&wanted) {
        Ok(())
    } else {
        Err(format!(
            "sync_handler_threads must be between 1 and {MAX_THREADS}, not {wanted}"
        ))
    }
}

/// Runs a handler's `work` on a handler thread; resolves to its result, or to why there is
/// none. Work whose caller has gone by the time a thread is free (a cancelled call) is skipped.
pub(crate) async fn run_python<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Python<'_>) -> T + Send + 'static,
{
    run_on(handler_threads(), work).await
}

/// Runs a token check's `work` on a thread for token checks.
pub(crate) async fn check_token_python<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Python<'_>) -> T + Send + 'static,
{
    run_on(auth_threads(), work).await
}

/// Runs `work` (handing a result to asyncio: it must not block) on a delivery thread.
pub(crate) async fn deliver_python<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Python<'_>) -> T + Send + 'static,
{
    run_on(delivery_threads(), work).await
}

async fn run_on<T, F>(threads: &'static Threads, work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Python<'_>) -> T + Send + 'static,
{
    let (done, result) = tokio::sync::oneshot::channel();
    threads.submit(Box::new(move |py| {
        if done.is_closed() {
            return;
        }
        let _ = done.send(work(py));
    }))?;
    result
        .await
        .map_err(|_| "the Python work panicked before it returned".to_owned())
}

impl Threads {
    fn new(name: &'static str, limit: usize) -> Self {
        let (sender, jobs) = channel();
        Threads {
            name,
            sender: Mutex::new(sender),
            jobs: Mutex::new(jobs),
            started: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            idle: AtomicUsize::new(0),
            starting: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
        }
    }

    fn submit(&'static self, job: Job) -> Result<(), String> {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        if lock(&self.sender).send(job).is_err() {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err("the Python threads are gone".to_owned());
        }
        // A job left queued when this fails is skipped: its caller has gone by then.
        self.start_for_waiting_work()
    }

    /// Starts threads while work waits with none idle, up to the limit. Fails only when there
    /// is no thread at all to take the work.
    fn start_for_waiting_work(&'static self) -> Result<(), String> {
        while self.waiting.load(Ordering::Acquire)
            > self.idle.load(Ordering::Acquire) + self.starting.load(Ordering::Acquire)
        {
            if !self.start_one()? {
                break;
            }
        }
        Ok(())
    }

    /// One more thread, unless the limit is reached (`Ok(false)`).
    fn start_one(&'static self) -> Result<bool, String> {
        let mut started = self.started.load(Ordering::Acquire);
        loop {
            if started >= self.limit.load(Ordering::Acquire) {
                return Ok(false);
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
        self.starting.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || self.serve());
        match spawned {
            Ok(_) => Ok(true),
            Err(err) => {
                self.starting.fetch_sub(1, Ordering::AcqRel);
                let left = self.started.fetch_sub(1, Ordering::AcqRel) - 1;
                tracing::error!("cannot start a thread for Python work: {err}");
                if left == 0 {
                    return Err(format!("cannot start a thread for Python work: {err}"));
                }
                Ok(false)
            }
        }
    }

    /// A thread's life: in Python throughout, without the GIL while it waits.
    fn serve(&self) {
        Python::attach(|py| {
            let mut first = true;
            while let Some(job) = py.detach(|| self.next_job(std::mem::take(&mut first))) {
                // A panic in the work drops its result sender (the caller hears of it);
                // the thread goes on.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(py)));
            }
        });
    }

    fn next_job(&self, first: bool) -> Option<Job> {
        self.idle.fetch_add(1, Ordering::AcqRel);
        if first {
            self.starting.fetch_sub(1, Ordering::AcqRel);
        }
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
