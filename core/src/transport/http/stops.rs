//! Telling open connections that the server is stopping.
//!
//! A connection checks for a stop on every wake-up, i.e. on every request. Waiting on a
//! `CancellationToken` costs two locks per check (its flag and its waiter list are both behind
//! one); a flag and a waker of the connection's own cost a few atomic operations.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

/// The stop signals of the server's open connections.
#[derive(Default)]
pub(crate) struct ConnectionStops {
    open: Mutex<Vec<Weak<ConnectionStop>>>,
}

/// One connection's stop signal: awaiting it completes once the server stops.
#[derive(Default)]
pub(crate) struct ConnectionStop {
    stopped: AtomicBool,
    waker: AtomicWaker,
}

impl ConnectionStops {
    /// A signal for a new connection.
    pub(crate) fn add(&self) -> Arc<ConnectionStop> {
        let stop = Arc::new(ConnectionStop::default());
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        // Forget closed connections before the list would grow: amortised O(1) per connection.
        if open.len() == open.capacity() {
            open.retain(|weak| weak.strong_count() > 0);
        }
        open.push(Arc::downgrade(&stop));
        stop
    }

    /// Signals every connection added so far.
    pub(crate) fn stop_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(|e| e.into_inner()));
        for stop in open.iter().filter_map(Weak::upgrade) {
            stop.stopped.store(true, Ordering::Release);
            stop.waker.wake();
        }
    }
}

impl ConnectionStop {
    pub(crate) fn stopped(&self) -> Stopped<'_> {
        Stopped(self)
    }
}

/// Completes when its connection's server stops.
pub(crate) struct Stopped<'a>(&'a ConnectionStop);

impl Future for Stopped<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let stop = self.0;
        if stop.stopped.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        stop.waker.register(cx.waker());
        // A stop between the first check and the registration woke the old waker, if any.
        if stop.stopped.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_open_connection_sees_the_stop() {
        let stops = ConnectionStops::default();
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let stop = stops.add();
                tokio::spawn(async move { stop.stopped().await })
            })
            .collect();
        // Closed connections are forgotten without disturbing the open ones.
        for _ in 0..10 {
            drop(stops.add());
        }
        tokio::task::yield_now().await;
        stops.stop_all();
        for task in waiting {
            tokio::time::timeout(std::time::Duration::from_secs(5), task)
                .await
                .expect("a waiting connection is woken")
                .unwrap();
        }
    }

    #[tokio::test]
    async fn a_stop_before_the_first_wait_is_seen() {
        let stops = ConnectionStops::default();
        let stop = stops.add();
        stops.stop_all();
        stop.stopped().await;
    }

    #[test]
    fn closed_connections_do_not_pile_up() {
        let stops = ConnectionStops::default();
        let open = stops.add();
        for _ in 0..1_000 {
            drop(stops.add());
        }
        let kept = stops.open.lock().unwrap().len();
        assert!(kept <= 64, "{kept} signals kept for one open connection");
        drop(open);
    }
}
