//! The JS thread's executor for a connection's pending tool calls.
//!
//! A call whose handler returned a Promise (or that waits for a concurrency slot, a timer, an
//! answer from the client) is handed here by the engine instead of becoming a tokio task: it is
//! polled on the JS thread, so when its Promise settles on the JS thread the answer is made
//! right there. Wake-ups from other threads (timers, the client's answers) ring the
//! connection's threadsafe function, and the JS thread polls on its next turn.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Wake, Waker};

use toolwire::CallTask;

use crate::js_thread;
use crate::runtime::runtime;

pub(crate) struct LocalExecutor {
    queue: Mutex<VecDeque<Arc<LocalTask>>>,
    /// The connection whose feeder drains this executor before returning to the event loop.
    connection: usize,
    /// Asks the JS thread for a turn (the connection's wake-up).
    ring: Box<dyn Fn() + Send + Sync>,
}

struct LocalTask {
    future: Mutex<Option<CallTask>>,
    queued: AtomicBool,
    executor: Weak<LocalExecutor>,
}

impl Wake for LocalTask {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(executor) = self.executor.upgrade() {
            executor.enqueue(self.clone());
        }
    }
}

impl LocalExecutor {
    pub(crate) fn new(connection: usize, ring: Box<dyn Fn() + Send + Sync>) -> Arc<Self> {
        Arc::new(LocalExecutor {
            queue: Mutex::new(VecDeque::new()),
            connection,
            ring,
        })
    }

    pub(crate) fn spawn(self: &Arc<Self>, future: CallTask) {
        let task = Arc::new(LocalTask {
            future: Mutex::new(Some(future)),
            queued: AtomicBool::new(true),
            executor: Arc::downgrade(self),
        });
        self.enqueue(task);
    }

    fn enqueue(&self, task: Arc<LocalTask>) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(task);
        // While this connection is being fed on this thread, the feeder drains before it
        // returns; otherwise the JS thread is asked for a turn.
        if !js_thread::is_feeding(self.connection) {
            (self.ring)();
        }
    }

    pub(crate) fn has_work(&self) -> bool {
        !self
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Polls every task queued now (tasks woken meanwhile wait for the next call). Must run
    /// on the JS thread, inside [`js_thread::feeding`] for this connection.
    pub(crate) fn run_queued(&self) {
        // Calls create tokio timers (deadlines, requests to the client) as they go.
        let _runtime = runtime().enter();
        let batch: Vec<_> = self
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        for task in batch {
            task.queued.store(false, Ordering::Release);
            let waker = Waker::from(task.clone());
            let mut cx = Context::from_waker(&waker);
            // Busy means this very task is being polled further up this thread's stack (a
            // handler fed this connection again): it runs on the next turn instead.
            let Ok(mut slot) = task.future.try_lock() else {
                task.wake_by_ref();
                continue;
            };
            if let Some(future) = slot.as_mut() {
                // Tool code is caught by the engine; this guards the executor itself.
                let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    future.as_mut().poll(&mut cx)
                }));
                if !matches!(polled, Ok(std::task::Poll::Pending)) {
                    *slot = None;
                }
            }
        }
    }
}
