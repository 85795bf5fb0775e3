//! A concurrency limit with a bounded queue: past the queue bound a call is refused at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

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

/// One [`Limiter`] per principal, shared by every session and exchange it authenticated while
/// any of them holds it: a principal's calls are limited together, however many sessions (or
/// stateless requests) it spreads them over.
pub(crate) struct PrincipalLimiters {
    limit: usize,
    max_queued: usize,
    queued: Arc<AtomicUsize>,
    table: Mutex<PrincipalTable>,
}

struct PrincipalTable {
    limiters: HashMap<String, Weak<Limiter>>,
    /// When the table reaches this many entries, those no session holds any more are dropped:
    /// it stays within twice the principals in use (plus a floor), at amortised O(1).
    prune_at: usize,
}

const PRUNE_FLOOR: usize = 64;

impl PrincipalLimiters {
    pub(crate) fn new(limit: usize, max_queued: usize, queued: Arc<AtomicUsize>) -> Self {
        PrincipalLimiters {
            limit,
            max_queued,
            queued,
            table: Mutex::new(PrincipalTable {
                limiters: HashMap::new(),
                prune_at: PRUNE_FLOOR,
            }),
        }
    }

    /// The limiter `principal`'s sessions share, made when none of them holds one.
    pub(crate) fn of(&self, principal: &str) -> Arc<Limiter> {
        let mut table = self
            .table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(limiter) = table.limiters.get(principal).and_then(Weak::upgrade) {
            return limiter;
        }
        if table.limiters.len() >= table.prune_at {
            table.limiters.retain(|_, held| held.strong_count() > 0);
            table.prune_at = (table.limiters.len() * 2).max(PRUNE_FLOOR);
        }
        let limiter = Arc::new(Limiter::sharing_queue(
            self.limit,
            self.max_queued,
            self.queued.clone(),
        ));
        table
            .limiters
            .insert(principal.to_owned(), Arc::downgrade(&limiter));
        limiter
    }

    #[cfg(test)]
    fn entries(&self) -> usize {
        self.table.lock().map(|t| t.limiters.len()).unwrap_or(0)
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

    #[tokio::test]
    async fn a_principal_shares_one_limiter_until_no_one_holds_it() {
        let limiters = PrincipalLimiters::new(1, 0, Arc::default());
        let ann = limiters.of("ann");
        let ann_again = limiters.of("ann");
        assert!(Arc::ptr_eq(&ann, &ann_again));
        let Admission::Admitted(_running) = ann.admit(&CallCancel::default()).await else {
            panic!("ann's first call runs")
        };
        assert!(matches!(
            ann_again.admit(&CallCancel::default()).await,
            Admission::Overloaded { limit: 1, .. }
        ));
        let bob = limiters.of("bob");
        assert!(matches!(
            bob.admit(&CallCancel::default()).await,
            Admission::Admitted(_)
        ));
        drop((ann, ann_again, bob));
        // Principals no one holds are dropped once the table would grow past its floor.
        for n in 0..PRUNE_FLOOR * 3 {
            drop(limiters.of(&format!("p{n}")));
        }
        assert!(limiters.entries() <= PRUNE_FLOOR, "{}", limiters.entries());
    }
}
