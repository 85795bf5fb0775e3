//! Polls a connection again, right away, when it wakes itself while being polled.
//!
//! hyper hands a request's body to the service through a channel whose two ends both live in
//! the connection's task, so every request wakes that task while it is running: once when the
//! service asks for the body, once when the body is sent. tokio takes a wake during a poll for a
//! yield: it queues the task again and wakes another worker to steal it (a futex or eventfd
//! write, then a poll on a cold core), twice per request. Serving such a wake with another poll
//! in place costs none of that; wakes from anywhere else reach the task as usual.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

const IDLE: u8 = 0;
const POLLING: u8 = 1;
const WOKEN_WHILE_POLLING: u8 = 2;

/// How many polls one wake of the task may take before it yields like any busy task (so a
/// connection that keeps waking itself cannot starve the others).
const MAX_POLLS_IN_PLACE: usize = 4;

pub(crate) struct InPlace<F> {
    inner: F,
    signal: Arc<Signal>,
    waker: Waker,
}

struct Signal {
    state: AtomicU8,
    task: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match self.state.compare_exchange(
            POLLING,
            WOKEN_WHILE_POLLING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // The poll under way sees it and polls again.
            Ok(_) | Err(WOKEN_WHILE_POLLING) => {}
            Err(_) => self.task.wake(),
        }
    }
}

impl<F: Future + Unpin> InPlace<F> {
    pub(crate) fn new(inner: F) -> Self {
        let signal = Arc::new(Signal {
            state: AtomicU8::new(IDLE),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(signal.clone());
        InPlace {
            inner,
            signal,
            waker,
        }
    }
}

impl<F: Future + Unpin> Future for InPlace<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.signal.task.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..MAX_POLLS_IN_PLACE {
            this.signal.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = Pin::new(&mut this.inner).poll(&mut inner_cx) {
                this.signal.state.store(IDLE, Ordering::Release);
                return Poll::Ready(output);
            }
            // A wake after this exchange finds IDLE and goes to the task's own waker.
            if this
                .signal
                .state
                .compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Poll::Pending;
            }
        }
        this.signal.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Wakes itself on its first `self_wakes` polls, then finishes.
    struct WakesItself {
        polls: Arc<AtomicUsize>,
        self_wakes: usize,
    }

    impl Future for WakesItself {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let done = self.polls.fetch_add(1, Ordering::SeqCst);
            if done < self.self_wakes {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        }
    }

    /// Counts the task's own wake-ups.
    struct CountingWaker(AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll_once<F: Future + Unpin>(future: &mut InPlace<F>, task: &Arc<CountingWaker>) -> bool {
        let waker = Waker::from(task.clone());
        Pin::new(future)
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
    }

    /// Polls a future that wakes itself `self_wakes` times once, in place; returns whether it
    /// finished, how often it was polled and how often the task was woken.
    fn poll_self_waking(self_wakes: usize) -> (bool, usize, usize) {
        let polls = Arc::new(AtomicUsize::new(0));
        let task = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let mut future = InPlace::new(WakesItself {
            polls: polls.clone(),
            self_wakes,
        });
        let finished = poll_once(&mut future, &task);
        (
            finished,
            polls.load(Ordering::SeqCst),
            task.0.load(Ordering::SeqCst),
        )
    }

    #[test]
    fn a_wake_during_the_poll_is_served_in_place() {
        // Two self-wakes: three polls in one, and the task is never rescheduled.
        assert_eq!(poll_self_waking(2), (true, 3, 0));
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_to_the_scheduler() {
        // It asks to be polled again after its share of polls in place.
        assert_eq!(poll_self_waking(100), (false, MAX_POLLS_IN_PLACE, 1));
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task() {
        let polls = Arc::new(AtomicUsize::new(0));
        let task = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let inner_waker: Arc<std::sync::Mutex<Option<Waker>>> = Arc::default();
        let keep = inner_waker.clone();
        let counter = polls.clone();
        let mut future = InPlace::new(std::future::poll_fn(move |cx| {
            *keep.lock().unwrap() = Some(cx.waker().clone());
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        }));
        assert!(!poll_once(&mut future, &task));
        let waker = inner_waker.lock().unwrap().take().unwrap();
        std::thread::spawn(move || waker.wake()).join().unwrap();
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        assert!(poll_once(&mut future, &task));
    }
}
