//! A call's cancellation, shared by the limiter that queues the call and the context that
//! runs it.

use std::sync::OnceLock;
use std::sync::atomic::{Ordering, fence};

use tokio_util::sync::CancellationToken;

use crate::flag::{Flag, Raised};

/// A call's cancellation: a [`Flag`] (read without a lock, waited on by the call's own task)
/// and a [`CancellationToken`] made only for a handler that asks for one. A token takes a lock
/// to be made, cloned, dropped and even read (and two for each poll of a wait on it), and most
/// calls never need one.
#[derive(Default)]
pub(crate) struct CallCancel {
    flag: Flag,
    token: OnceLock<CancellationToken>,
}

impl CallCancel {
    pub(crate) fn cancel(&self) {
        self.flag.raise();
        // Pairs with the fence in `token`: either this sees the token, or `token` sees the flag.
        fence(Ordering::SeqCst);
        if let Some(token) = self.token.get() {
            token.cancel();
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flag.is_raised()
    }

    /// The token, cancelled if the call already is.
    pub(crate) fn token(&self) -> &CancellationToken {
        let token = self.token.get_or_init(CancellationToken::new);
        fence(Ordering::SeqCst);
        if self.flag.is_raised() {
            token.cancel();
        }
        token
    }

    pub(crate) async fn cancelled(&self) {
        if !self.is_cancelled() {
            self.token().cancelled().await;
        }
    }

    /// Completes once the call is cancelled; only for the call's own task (the engine's
    /// admission and handler waits), as the flag keeps a single waker.
    pub(crate) fn for_call(&self) -> Raised<'_> {
        self.flag.raised()
    }
}

#[cfg(test)]
mod tests {
    use super::CallCancel;
    use std::sync::Arc;

    #[test]
    fn a_token_made_before_or_after_the_cancel_is_cancelled() {
        let early = CallCancel::default();
        let token = early.token().clone();
        assert!(!early.is_cancelled() && !token.is_cancelled());
        early.cancel();
        assert!(early.is_cancelled() && token.is_cancelled());

        let late = CallCancel::default();
        late.cancel();
        assert!(late.is_cancelled() && late.token().is_cancelled());
    }

    #[test]
    fn a_cancel_racing_the_first_token_is_never_lost() {
        for _ in 0..2_000 {
            let cancel = Arc::new(CallCancel::default());
            let canceller = {
                let cancel = cancel.clone();
                std::thread::spawn(move || cancel.cancel())
            };
            let token = cancel.token().clone();
            canceller.join().unwrap();
            assert!(token.is_cancelled());
        }
    }

    /// Cancels once before `wait` starts and once while it waits; both waits must complete.
    /// Returns the cancellation that was waited on.
    async fn cancel_before_and_while<F>(wait: fn(Arc<CallCancel>) -> F) -> Arc<CallCancel>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let first = Arc::new(CallCancel::default());
        first.cancel();
        wait(first).await;

        let later = Arc::new(CallCancel::default());
        let waiter = tokio::spawn(wait(later.clone()));
        tokio::task::yield_now().await;
        later.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("the wait completes")
            .unwrap();
        later
    }

    #[tokio::test]
    async fn the_call_task_wait_sees_a_cancel_before_or_while_it_waits() {
        let cancel = cancel_before_and_while(|c| async move { c.for_call().await }).await;
        assert!(cancel.token.get().is_none(), "no token was made");
    }

    #[tokio::test]
    async fn cancelled_completes_whether_the_cancel_comes_first_or_later() {
        cancel_before_and_while(|c| async move { c.cancelled().await }).await;
    }
}
