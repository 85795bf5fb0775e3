//! An executor for hosts that poll their pending calls on their own thread.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// Calls taken over and not yet finished (see [`unfinished`](Self::unfinished)).
    unfinished: Arc<AtomicUsize>,
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
    /// The executor's count, which this call leaves when it finishes or is dropped unfinished.
    unfinished: Arc<AtomicUsize>,
}

/// The call in `slot` is done, or dropped: it leaves the count once, however it ended.
fn finish(slot: &mut Option<CallTask>, unfinished: &AtomicUsize) {
    if slot.take().is_some() {
        unfinished.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for LocalTask {
    fn drop(&mut self) {
        // A pending call whose wakers all went (nothing will wake it again) ends here, maybe on
        // another thread: the host is rung, so that its next turn sees the count fall.
        let slot = self.future.get_mut().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            finish(slot, &self.unfinished);
            if let Some(executor) = self.executor.upgrade() {
                (executor.ring)();
            }
        }
    }
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
            unfinished: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Calls taken over and not yet finished, ready or waiting. A host whose thread may end
    /// when it has nothing of its own to do (Node's event loop) keeps it going while this is
    /// not zero: a call waiting on the engine (a lifespan start, a deadline) is woken from
    /// another thread, and that wake-up must find the host thread still there.
    pub fn unfinished(&self) -> usize {
        self.unfinished.load(Ordering::Acquire)
    }

    /// Takes over a call; it is polled at the next [`run_ready`](Self::run_ready).
    pub fn spawn(self: &Arc<Self>, call: CallTask) {
        self.unfinished.fetch_add(1, Ordering::AcqRel);
        self.enqueue(Arc::new(LocalTask {
            future: Mutex::new(Some(call)),
            queued: AtomicBool::new(true),
            executor: Arc::downgrade(self),
            unfinished: self.unfinished.clone(),
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
                    finish(&mut slot, &task.unfinished);
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_counts_as_unfinished_until_it_ends_or_nothing_can_wake_it() {
        let rings = Arc::new(AtomicUsize::new(0));
        let executor = LocalExecutor::new({
            let rings = rings.clone();
            move || {
                rings.fetch_add(1, Ordering::SeqCst);
            }
        });
        executor.spawn(Box::pin(async {}));
        // Pending for good, keeping no waker: once polled, nothing holds it any more.
        executor.spawn(Box::pin(std::future::pending()));
        assert_eq!(executor.unfinished(), 2);
        let spawned = rings.load(Ordering::SeqCst);
        assert!(executor.run_ready());
        assert_eq!(executor.unfinished(), 0);
        // The dropped one rang the host, whose next turn sees the count fall.
        assert_eq!(rings.load(Ordering::SeqCst), spawned + 1);
    }

    #[test]
    fn a_call_whose_waker_is_kept_stays_unfinished_until_woken_and_done() {
        let executor = LocalExecutor::new(|| {});
        let (tell, told) = tokio::sync::oneshot::channel::<()>();
        executor.spawn(Box::pin(async move {
            let _ = told.await;
        }));
        assert!(executor.run_ready());
        assert_eq!(executor.unfinished(), 1);
        let _ = tell.send(());
        assert!(executor.run_ready());
        assert_eq!(executor.unfinished(), 0);
    }
}
