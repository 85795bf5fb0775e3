//! An executor for hosts that poll their pending calls on their own thread.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use super::CallTask;

/// Holds the calls a host took over with [`HostHooks::spawn_call`](super::HostHooks::spawn_call) and
/// polls them when the host asks, on the host's thread (a JS event loop, a JVM thread).
///
/// A woken call is queued and `ring` is called, on whatever thread woke it: the host then
/// schedules [`run_ready`](Self::run_ready) on its thread. `ring` must be quick.
pub struct LocalExecutor {
    ready: Mutex<VecDeque<Arc<LocalTask>>>,
    ring: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for LocalExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalExecutor").finish_non_exhaustive()
    }
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
    /// An executor that calls `ring` whenever a call becomes ready.
    pub fn new(ring: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(LocalExecutor {
            ready: Mutex::new(VecDeque::new()),
            ring: Box::new(ring),
        })
    }

    /// Takes over a call; it is polled at the next [`run_ready`](Self::run_ready).
    pub fn spawn(self: &Arc<Self>, call: CallTask) {
        self.enqueue(Arc::new(LocalTask {
            future: Mutex::new(Some(call)),
            queued: AtomicBool::new(true),
            executor: Arc::downgrade(self),
        }));
    }

    fn enqueue(&self, task: Arc<LocalTask>) {
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(task);
        (self.ring)();
    }

    /// Whether some call is ready to be polled.
    pub fn has_work(&self) -> bool {
        !self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Polls every call that is ready now (calls woken meanwhile wait for the next run);
    /// returns whether there were any. Calls start tokio timers: run it inside the engine's
    /// runtime context (`Handle::enter`).
    pub fn run_ready(&self) -> bool {
        let batch: Vec<_> = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        let any = !batch.is_empty();
        for task in batch {
            task.queued.store(false, Ordering::Release);
            let waker = Waker::from(task.clone());
            let mut cx = Context::from_waker(&waker);
            // Busy means this very call is being polled further up this thread's stack (a
            // handler fed its session again): it runs at the next turn instead.
            let Ok(mut slot) = task.future.try_lock() else {
                task.wake_by_ref();
                continue;
            };
            if let Some(future) = slot.as_mut() {
                // Tool code is caught inside the call; this guards the host's loop itself.
                let polled =
                    std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
                if !matches!(polled, Ok(Poll::Pending)) {
                    *slot = None;
                }
            }
        }
        any
    }
}
