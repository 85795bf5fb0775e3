//! Telling open connections that the server is stopping.
//!
//! A connection checks for a stop on every wake-up, i.e. on every request: a [`Flag`] of its
//! own costs an atomic load there, where waiting on a `CancellationToken` took two locks.

use std::sync::{Arc, Mutex, Weak};

use crate::flag::{Flag, Raised};

/// The stop signals of the server's open connections.
#[derive(Default)]
pub(crate) struct ConnectionStops {
    open: Mutex<Vec<Weak<ConnectionStop>>>,
}

/// One connection's stop signal: awaiting it completes once the server stops.
#[derive(Default)]
pub(crate) struct ConnectionStop(Flag);

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
            stop.0.raise();
        }
    }
}

impl ConnectionStop {
    pub(crate) fn stopped(&self) -> Raised<'_> {
        self.0.raised()
    }
}

#[cfg(test)]
mod tests {
    use std::task::Poll;
    use std::time::Duration;

    use super::*;

    /// A test that hangs fails instead, after this long.
    const PATIENCE: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn every_open_connection_sees_the_stop() {
        let stops = ConnectionStops::default();
        let (waiting_tx, mut waiting_rx) = tokio::sync::mpsc::unbounded_channel();
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let stop = stops.add();
                let waiting = waiting_tx.clone();
                tokio::spawn(async move {
                    let mut stopped = std::pin::pin!(stop.stopped());
                    // Polled once, so this task is known to be waiting, before the test stops.
                    let first = std::future::poll_fn(|cx| Poll::Ready(stopped.as_mut().poll(cx)));
                    assert!(first.await.is_pending(), "stopped before the stop");
                    let _ = waiting.send(());
                    stopped.await;
                })
            })
            .collect();
        // Closed connections are forgotten without disturbing the open ones.
        for _ in 0..10 {
            drop(stops.add());
        }
        for _ in 0..3 {
            tokio::time::timeout(PATIENCE, waiting_rx.recv())
                .await
                .expect("every connection starts waiting")
                .expect("a waiting connection's task is alive");
        }
        stops.stop_all();
        for task in waiting {
            tokio::time::timeout(PATIENCE, task)
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
        tokio::time::timeout(PATIENCE, stop.stopped())
            .await
            .expect("a connection added before the stop sees it at its first wait");
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
