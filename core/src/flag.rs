//! A flag that is raised once and that one task at a time can wait on: a check is an atomic
//! load, a wait registers a waker without a lock (a `CancellationToken` takes its mutex for
//! both).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

#[derive(Default)]
pub(crate) struct Flag {
    raised: AtomicBool,
    /// One waker: each user waits from a single task (a call's, a connection's).
    waiter: AtomicWaker,
}

impl Flag {
    pub(crate) fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.waiter.wake();
    }

    pub(crate) fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Completes once the flag is raised.
    pub(crate) fn raised(&self) -> Raised<'_> {
        Raised(self)
    }
}

/// See [`Flag::raised`].
pub(crate) struct Raised<'a>(&'a Flag);

impl Future for Raised<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let flag = self.0;
        if flag.is_raised() {
            return Poll::Ready(());
        }
        flag.waiter.register(cx.waker());
        // A raise between the check and the registration may have woken no one.
        if flag.is_raised() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
