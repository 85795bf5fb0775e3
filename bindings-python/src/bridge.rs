//! `LoopBridge`: hands `async def` calls to an asyncio loop without taking the GIL in Rust.
//!
//! Rust pushes jobs (start a call, cancel a call) into a queue and wakes the loop with one byte
//! on a socket pair; the loop watches the other end (`loop.add_reader`) and runs `drain` on its
//! own thread, where it holds the GIL anyway, creating and cancelling tasks directly. The
//! coroutine itself hands its outcome to a [`CallDone`] as it ends (a oneshot channel to Rust),
//! which saves the loop a turn per call over a done-callback on the task.

use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::{Context, ToolError, ToolOutput};

use crate::context::NativeContext;
use crate::convert::to_py;
use crate::handler::{output_from_py, tool_error};

pub(crate) type Outcome = Result<ToolOutput, ToolError>;

thread_local! {
    /// The bridge whose loop's thread this is, while it answers a mounted request in place
    /// ([`BridgeHandle::answering_here`]).
    static ANSWERING: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

enum Job {
    Start {
        call: u64,
        func: Arc<Py<PyAny>>,
        ctx: Context,
        arguments: Value,
        done: oneshot::Sender<Outcome>,
    },
    Cancel {
        call: u64,
    },
}

struct Shared {
    jobs: Mutex<VecDeque<Job>>,
    wake_pending: AtomicBool,
    waker: UnixStream,
    next_call: AtomicU64,
    /// Tasks in flight, by call: touched only on the loop's thread (`drain`, `CallDone`).
    tasks: Mutex<HashMap<u64, Py<PyAny>>>,
}

/// The Rust end, held by the handlers of one server while it is served on one loop.
#[derive(Clone)]
pub(crate) struct BridgeHandle {
    shared: Arc<Shared>,
}

impl BridgeHandle {
    /// Whether both are handles of the same bridge.
    pub(crate) fn same(&self, other: &BridgeHandle) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    fn push(&self, job: Job) {
        self.shared
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(job);
        if !self.shared.wake_pending.swap(true, Ordering::AcqRel) {
            // The socket is non-blocking; a full buffer means a wake-up is pending anyway.
            let _ = (&self.shared.waker).write(&[1]);
        }
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Runs `work` as this bridge's loop's thread answering a mounted request in place (called
    /// there, the GIL held): an `async def` tool first polled within it starts right here
    /// (`toolwire._loop.start_eagerly`), not through the queue.
    pub(crate) fn answering_here<T>(&self, work: impl FnOnce() -> T) -> T {
        struct Restore(Option<usize>);
        impl Drop for Restore {
            fn drop(&mut self) {
                ANSWERING.with(|slot| slot.set(self.0));
            }
        }
        let _restore = Restore(ANSWERING.with(|slot| slot.replace(Some(self.id()))));
        work()
    }

    /// Runs `func(ctx, arguments, done)` (a coroutine function that ends by calling
    /// `done.ok(result)` or `done.fail(exception)`) as a task on the loop: started in place,
    /// its first step run now, when the loop's own thread polls it answering a request
    /// ([`answering_here`](Self::answering_here)); else queued for the loop.
    pub(crate) async fn run(
        &self,
        func: Arc<Py<PyAny>>,
        ctx: Context,
        arguments: Value,
    ) -> Outcome {
        let call = self.shared.next_call.fetch_add(1, Ordering::Relaxed);
        let (done, outcome) = oneshot::channel();
        if ANSWERING.with(std::cell::Cell::get) == Some(self.id()) {
            Python::attach(|py| {
                start(
                    py,
                    &self.shared,
                    Starter::Eagerly,
                    call,
                    func,
                    ctx,
                    arguments,
                    done,
                );
            });
        } else {
            self.push(Job::Start {
                call,
                func,
                ctx,
                arguments,
                done,
            });
        }
        let mut guard = CancelOnDrop {
            bridge: self.clone(),
            call,
            armed: true,
        };
        let outcome = outcome.await;
        guard.armed = false;
        outcome.unwrap_or_else(|_| {
            Err(ToolError::new(
                "the asyncio loop stopped before the tool finished",
            ))
        })
    }
}

/// A call dropped before its answer (cancelled, timed out) cancels its task.
struct CancelOnDrop {
    bridge: BridgeHandle,
    call: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.bridge.push(Job::Cancel { call: self.call });
        }
    }
}

/// The Python end: `loop.add_reader(bridge.fileno(), bridge.drain)`.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct LoopBridge {
    shared: Arc<Shared>,
    reader: UnixStream,
    event_loop: Py<PyAny>,
}

impl LoopBridge {
    pub(crate) fn new(event_loop: Py<PyAny>) -> std::io::Result<Self> {
        let (waker, reader) = UnixStream::pair()?;
        waker.set_nonblocking(true)?;
        reader.set_nonblocking(true)?;
        Ok(LoopBridge {
            shared: Arc::new(Shared {
                jobs: Mutex::new(VecDeque::new()),
                wake_pending: AtomicBool::new(false),
                waker,
                next_call: AtomicU64::new(0),
                tasks: Mutex::new(HashMap::new()),
            }),
            reader,
            event_loop,
        })
    }

    pub(crate) fn handle(&self) -> BridgeHandle {
        BridgeHandle {
            shared: self.shared.clone(),
        }
    }
}

#[pymethods]
impl LoopBridge {
    /// The file descriptor the loop watches.
    fn fileno(&self) -> i32 {
        self.reader.as_raw_fd()
    }

    /// Starts and cancels the queued calls (on the loop's thread).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        let mut sink = [0u8; 256];
        loop {
            match (&self.reader).read(&mut sink) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(err.into()),
            }
        }
        // Only now: a push after this point writes a new byte (and so wakes us again); a push
        // before it is in the queue taken below. Clearing it before reading the socket could
        // swallow the byte of a push that set it, leaving it set with nobody to wake the loop.
        self.shared.wake_pending.store(false, Ordering::Release);
        let jobs: Vec<Job> = self
            .shared
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        let event_loop = self.event_loop.bind(py);
        for job in jobs {
            match job {
                Job::Start {
                    call,
                    func,
                    ctx,
                    arguments,
                    done,
                } => start(
                    py,
                    &self.shared,
                    Starter::Task(event_loop),
                    call,
                    func,
                    ctx,
                    arguments,
                    done,
                ),
                Job::Cancel { call } => {
                    let task = self
                        .shared
                        .tasks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&call);
                    if let Some(task) = task {
                        task.call_method0(py, intern!(py, "cancel"))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// How a call's coroutine is started on the loop's thread.
enum Starter<'a, 'py> {
    /// As a task of this loop.
    Task(&'a Bound<'py, PyAny>),
    /// Its first step now (`toolwire._loop.start_eagerly`), a task only if it waits.
    Eagerly,
}

/// Starts one call's coroutine on the loop's thread; a call that cannot start (its arguments
/// do not convert, say) fails with why.
#[allow(
    clippy::too_many_arguments,
    reason = "a job's fields, taken apart once"
)]
fn start(
    py: Python<'_>,
    shared: &Arc<Shared>,
    starter: Starter<'_, '_>,
    call: u64,
    func: Arc<Py<PyAny>>,
    ctx: Context,
    arguments: Value,
    done: oneshot::Sender<Outcome>,
) {
    let done = CallDone {
        tx: Mutex::new(Some(done)),
        call,
        shared: shared.clone(),
    };
    let done = match Py::new(py, done) {
        Ok(done) => done,
        Err(err) => {
            // Out of memory: this call's sender went with it (it fails as if the loop had
            // stopped); the other jobs still run.
            tracing::debug!("could not start an async tool: {err}");
            return;
        }
    };
    let started = (|| -> PyResult<Bound<'_, PyAny>> {
        let native_ctx = Py::new(py, NativeContext::new(ctx))?;
        let coroutine = func.call1(py, (native_ctx, to_py(py, &arguments)?, done.clone_ref(py)))?;
        match starter {
            Starter::Task(event_loop) => {
                event_loop.call_method1(intern!(py, "create_task"), (coroutine,))
            }
            Starter::Eagerly => {
                // Looked up once: this is on every eager call's way.
                static START_EAGERLY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
                START_EAGERLY
                    .import(py, "toolwire._loop", "start_eagerly")?
                    .call1((coroutine,))
            }
        }
    })();
    match started {
        // Finished in its first step: its outcome is in already.
        Ok(task) if task.is_none() => {}
        Ok(task) => {
            shared
                .tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(call, task.unbind());
        }
        Err(err) => done.get().send(Err(tool_error(py, err))),
    }
}

/// Where a call's coroutine hands its outcome (on the loop's thread), for Rust.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct CallDone {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    call: u64,
    shared: Arc<Shared>,
}

impl CallDone {
    fn send(&self, outcome: Outcome) {
        self.shared
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.call);
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // Nobody waits any more when the call was cancelled first.
            let _ = tx.send(outcome);
        }
    }
}

#[pymethods]
impl CallDone {
    /// The tool returned `result` (see [`output_from_py`]).
    fn ok(&self, result: &Bound<'_, PyAny>) {
        self.send(output_from_py(result));
    }

    /// The tool raised `exception`.
    fn fail(&self, exception: &Bound<'_, PyAny>) {
        let py = exception.py();
        self.send(Err(tool_error(py, PyErr::from_value(exception.clone()))));
    }
}
