//! A concurrency limit with a bounded queue: past the queue bound a call is refused at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cancel::CallCancel;

pub(crate) struct Limiter {
    semaphore: Arc<Semaphore>,
    /// Calls waiting for a slot; shared between limiters that share one queue bound.
    queued: Arc<AtomicUsize>,
    limit: usize,
    max_queued: usize,
}

pub(crate) enum Admission {
    Admitted(OwnedSemaphorePermit),
    /// Running and queued calls are both at their bounds.
    Overloaded {
        limit: usize,
        max_queued: usize,
    },
    Cancelled,
}

impl Limiter {
    pub(crate) fn new(limit: usize, max_queued: usize) -> Self {
        Self::sharing_queue(limit, max_queued, Arc::default())
    }

    /// A limiter whose waiting calls count against `queued`, with every other limiter given
    /// the same counter: together they hold at most `max_queued` waiting calls.
    pub(crate) fn sharing_queue(limit: usize, max_queued: usize, queued: Arc<AtomicUsize>) -> Self {
        Limiter {
            semaphore: Arc::new(Semaphore::new(limit.min(Semaphore::MAX_PERMITS))),
            queued,
            limit,
            max_queued,
        }
    }

    /// A permit, waiting in the queue if every slot is taken, until `cancel` fires.
    pub(crate) async fn admit(&self, cancel: &CallCancel) -> Admission {
        if let Ok(permit) = self.semaphore.clone().try_acquire_owned() {
            return Admission::Admitted(permit);
        }
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.max_queued {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            return Admission::Overloaded {
                limit: self.limit,
                max_queued: self.max_queued,
            };
        }
        let admission = tokio::select! {
            permit = self.semaphore.clone().acquire_owned() => match permit {
                Ok(permit) => Admission::Admitted(permit),
                Err(_) => Admission::Cancelled,
            },
            () = cancel.for_call() => Admission::Cancelled,
        };
        self.queued.fetch_sub(1, Ordering::AcqRel);
        admission
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn queue_then_refuse() {
        let limiter = Limiter::new(1, 1);
        let cancel = CallCancel::default();
        let Admission::Admitted(first) = limiter.admit(&cancel).await else {
            panic!("first call must run")
        };
        let waiting = {
            let limiter = Arc::new(limiter);
            let l2 = limiter.clone();
            let handle = tokio::spawn(async move {
                matches!(
                    l2.admit(&CallCancel::default()).await,
                    Admission::Admitted(_)
                )
            });
            tokio::task::yield_now().await;
            while limiter.queued.load(Ordering::Acquire) == 0 {
                tokio::task::yield_now().await;
            }
            assert!(matches!(
                limiter.admit(&CallCancel::default()).await,
                Admission::Overloaded {
                    limit: 1,
                    max_queued: 1
                }
            ));
            drop(first);
            handle
        };
        assert!(waiting.await.unwrap());
    }
}
