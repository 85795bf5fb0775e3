//! Calls handed to the host instead of called into it.
//!
//! Calling into the JVM from a Rust thread (a JNA callback) attaches the thread, boxes every
//! argument and hops to a coroutine dispatcher: tens of microseconds a call. So a "queued"
//! tool does not call its handler: its call is put in a queue, and a host thread takes the
//! calls in batches with one downcall (`toolwire_queue_take`, or the stdio driver's `next`),
//! runs the handlers itself and hands the results back in batches (`toolwire_queue_complete`);
//! see `jvm_abi`. A handler that finishes at once costs no thread hop when the stdio driver
//! took its call.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::host::json_text;
use toolwire::{Context, ToolError, ToolOutput};

use crate::result::ToolResult;

/// One call for the host to run.
pub(crate) struct PendingCall {
    /// Names the call in `complete_calls` and in `Work::cancelled`.
    pub call_id: u64,
    /// The key the tool was registered with (`toolwire_queued_tool`).
    pub tool_key: u32,
    /// The arguments as JSON text, already checked against the input schema.
    pub arguments_json: String,
}

/// What a host thread takes from the queue at once.
pub(crate) struct Work {
    /// Calls to run.
    pub calls: Vec<PendingCall>,
    /// Calls taken earlier that were cancelled (by the client, a deadline or shutdown) before
    /// their result came back: stop them; their results are no longer needed.
    pub cancelled: Vec<u64>,
}

/// A call's result, handed back.
pub(crate) struct Completion {
    /// The `PendingCall::call_id`.
    pub call_id: u64,
    /// The result (`ToolResult::Error` for a failure).
    pub result: ToolResult,
}

#[derive(Default)]
struct QueueState {
    calls: Vec<PendingCall>,
    cancelled: Vec<u64>,
    /// Each outstanding call: where its result goes, and its context (handed out only when
    /// the handler asks for it: most never do, and an object per call costs the host a
    /// finalizer).
    waiting: HashMap<u64, Outstanding>,
}

struct Outstanding {
    reply: oneshot::Sender<ToolResult>,
    context: Context,
}

/// The process's one queue: tool keys are unique across servers, so any host thread that
/// takes a call can run it.
pub(crate) struct CallQueue {
    state: Mutex<QueueState>,
    ready: Condvar,
    next_id: AtomicU64,
    /// Extra wake-ups for threads that wait on more than the queue (the stdio driver).
    listeners: Mutex<Vec<Arc<dyn Fn() + Send + Sync>>>,
}

thread_local! {
    /// Set on a thread that takes its own queued calls right after feeding frames (the stdio
    /// driver): calls it queues itself need no wake-up.
    static TAKES_OWN_CALLS: Cell<bool> = const { Cell::new(false) };
    /// Set while a host thread (one of the app's web server's, in a downcall) has the engine
    /// answer a request in place: a queued call first polled there is started right there.
    static ON_HOST_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Starts a queued call's handler on the host thread that is inside the engine: `(call_id,
/// tool_key, arguments, arguments_len)`, the arguments' JSON text as UTF-8. The host hands the
/// result back with `toolwire_queue_complete` (before it returns, when the handler finished at
/// once) as for any queued call; one that goes on is cancelled as any queued call is.
pub(crate) type HostRunner = unsafe extern "C" fn(u64, u32, *const u8, usize);

/// The host's runner, registered once per process (`toolwire_host_runner`).
static HOST_RUNNER: OnceLock<HostRunner> = OnceLock::new();

/// Registers the host's runner; false when one was registered already (it stays).
pub(crate) fn set_host_runner(runner: HostRunner) -> bool {
    HOST_RUNNER.set(runner).is_ok()
}

/// Runs `body` with queued calls first polled on this thread started here, by the host's
/// runner when one is registered (the caller is a host thread inside the engine).
pub(crate) fn on_host_thread<T>(body: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ON_HOST_THREAD.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(ON_HOST_THREAD.with(|flag| flag.replace(true)));
    body()
}

/// The runner for a call first polled on this thread, when it is a host thread inside the
/// engine.
fn runner_here() -> Option<HostRunner> {
    if ON_HOST_THREAD.with(Cell::get) {
        HOST_RUNNER.get().copied()
    } else {
        None
    }
}

pub(crate) fn queue() -> &'static CallQueue {
    static QUEUE: OnceLock<CallQueue> = OnceLock::new();
    QUEUE.get_or_init(|| CallQueue {
        state: Mutex::new(QueueState::default()),
        ready: Condvar::new(),
        next_id: AtomicU64::new(1),
        listeners: Mutex::new(Vec::new()),
    })
}

/// Marks the current thread as one that takes its own queued calls while `body` runs.
pub(crate) fn taking_own_calls<T>(body: impl FnOnce() -> T) -> T {
    let before = TAKES_OWN_CALLS.with(|flag| flag.replace(true));
    let out = body();
    TAKES_OWN_CALLS.with(|flag| flag.set(before));
    out
}

impl CallQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Awaits a call the host runs itself, started on its thread (not queued for a taker).
    fn expect(&self, call_id: u64, reply: oneshot::Sender<ToolResult>, context: Context) {
        self.lock()
            .waiting
            .insert(call_id, Outstanding { reply, context });
    }

    fn push(&self, call: PendingCall, reply: oneshot::Sender<ToolResult>, context: Context) {
        {
            let mut state = self.lock();
            state
                .waiting
                .insert(call.call_id, Outstanding { reply, context });
            state.calls.push(call);
        }
        self.wake();
    }

    fn cancel(&self, call_id: u64) {
        {
            let mut state = self.lock();
            if state.waiting.remove(&call_id).is_none() {
                return;
            }
            // Not taken yet: it simply never runs.
            if let Some(at) = state.calls.iter().position(|c| c.call_id == call_id) {
                state.calls.swap_remove(at);
                return;
            }
            state.cancelled.push(call_id);
        }
        self.wake();
    }

    fn wake(&self) {
        if TAKES_OWN_CALLS.with(Cell::get) {
            return;
        }
        self.ready.notify_one();
        let listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for listener in listeners.iter() {
            listener();
        }
    }

    pub(crate) fn listen(&self, listener: Arc<dyn Fn() + Send + Sync>) {
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(listener);
    }

    pub(crate) fn unlisten(&self, listener: &Arc<dyn Fn() + Send + Sync>) {
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|l| !Arc::ptr_eq(l, listener));
    }

    /// Everything queued now, without waiting.
    pub(crate) fn take_now(&self) -> Work {
        let mut state = self.lock();
        Work {
            calls: std::mem::take(&mut state.calls),
            cancelled: std::mem::take(&mut state.cancelled),
        }
    }

    /// Waits up to `timeout` for work.
    pub(crate) fn take(&self, timeout: Duration) -> Work {
        let mut state = self.lock();
        if state.calls.is_empty() && state.cancelled.is_empty() {
            state = self
                .ready
                .wait_timeout(state, timeout)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Work {
            calls: std::mem::take(&mut state.calls),
            cancelled: std::mem::take(&mut state.cancelled),
        }
    }

    /// The context of a queued call still running.
    pub(crate) fn context(&self, call_id: u64) -> Option<Context> {
        self.lock()
            .waiting
            .get(&call_id)
            .map(|call| call.context.clone())
    }

    /// Hands results back; results of calls no longer waited for are dropped.
    pub(crate) fn complete(&self, completions: Vec<Completion>) {
        let replies: Vec<_> = {
            let mut state = self.lock();
            completions
                .into_iter()
                .filter_map(|done| {
                    state
                        .waiting
                        .remove(&done.call_id)
                        .map(|call| (call.reply, done.result))
                })
                .collect()
        };
        // Sent outside the lock: a send wakes the call, which may run right here.
        for (reply, result) in replies {
            let _ = reply.send(result);
        }
    }
}

/// The engine's handler for a queued tool: it queues each call and awaits its result.
pub(crate) struct QueuedTool {
    pub(crate) key: u32,
}

/// Withdraws a call whose future is dropped before its result came (cancelled).
struct Withdraw(Option<u64>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(call_id) = self.0 {
            queue().cancel(call_id);
        }
    }
}

#[async_trait::async_trait]
impl toolwire::ToolHandler for QueuedTool {
    async fn call(&self, context: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        let queue = queue();
        let call_id = queue.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, result) = oneshot::channel();
        let mut withdraw = Withdraw(Some(call_id));
        let arguments_json = json_text(&arguments);
        match runner_here() {
            // On the host's thread already: its handler starts here, with no hop to a taker
            // and back; one that finishes at once has handed its result back on return, so
            // the call is answered on this first poll.
            Some(run) => {
                queue.expect(call_id, reply, context);
                // SAFETY: the host registered `run` for the process's life; the arguments
                // outlive the call. `run` may re-enter the engine (its result comes back with
                // `toolwire_queue_complete`, a handler may answer a request of its own): no
                // lock of ours is held here.
                unsafe {
                    run(
                        call_id,
                        self.key,
                        arguments_json.as_ptr(),
                        arguments_json.len(),
                    )
                };
            }
            None => queue.push(
                PendingCall {
                    call_id,
                    tool_key: self.key,
                    arguments_json,
                },
                reply,
                context,
            ),
        }
        let outcome = result.await;
        withdraw.0 = None;
        match outcome {
            Ok(result) => result.into_output(),
            Err(_) => Err(ToolError::new(
                "the tool's result was lost (its host stopped)",
            )),
        }
    }
}
