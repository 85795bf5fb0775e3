//! Looking for the next frame for a moment before the runtime sleeps.
//!
//! A client that is answered at once often sends its next request within tens of µs. If the
//! runtime has gone to sleep in `epoll_wait` by then, the request has to wake it, and on a busy
//! or virtualised host that wake-up costs more than the request itself. So after each frame the
//! serve loop stays awake for a while, yielding to the runtime (whose driver polls I/O and
//! timers each time round, so nothing else waits for it), before it lets the runtime sleep.
//!
//! How long adapts to the client's pace, as KVM's halt polling does: a wait that ended just
//! after the window doubles it (from [`FIRST_WINDOW`] up to the ceiling); a wait longer than
//! the ceiling halves it, down to not looking at all. A client that calls now and then costs
//! nothing; a client in a tight loop costs at most the ceiling of CPU per request.

use std::convert::Infallible;
use std::time::{Duration, Instant};

/// The first window after one that was zero.
const FIRST_WINDOW: Duration = Duration::from_micros(10);

pub(crate) struct IdlePoll {
    window: Duration,
    ceiling: Duration,
}

impl IdlePoll {
    /// Looking for at most `ceiling` (zero: never).
    pub(crate) fn new(ceiling: Duration) -> Self {
        IdlePoll {
            window: Duration::ZERO,
            ceiling,
        }
    }

    /// How long to look for input now.
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// Keeps the task awake until the window since `from` has passed; never completes (race
    /// it against the read).
    pub(crate) async fn look(&self, from: Instant) -> Infallible {
        let window = self.window;
        while !window.is_zero() && from.elapsed() < window {
            tokio::task::yield_now().await;
        }
        std::future::pending().await
    }

    /// Adapts the window to a wait for input that lasted `waited`.
    pub(crate) fn waited(&mut self, waited: Duration) {
        if waited <= self.window {
            return;
        }
        self.window = if waited <= self.ceiling {
            (self.window * 2).max(FIRST_WINDOW).min(self.ceiling)
        } else {
            self.window / 2
        };
        if self.window < FIRST_WINDOW {
            self.window = Duration::ZERO;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CEILING: Duration = Duration::from_micros(200);

    #[test]
    fn a_client_answering_quickly_grows_the_window_to_cover_its_pace() {
        let mut idle = IdlePoll::new(CEILING);
        let pace = Duration::from_micros(70);
        let mut grown = Vec::new();
        for _ in 0..8 {
            idle.waited(pace);
            grown.push(idle.window().as_micros());
        }
        // 10, 20, 40, 80: then the pace is covered and the window stays.
        assert_eq!(grown, [10, 20, 40, 80, 80, 80, 80, 80]);
    }

    #[test]
    fn the_window_never_passes_the_ceiling() {
        let mut idle = IdlePoll::new(CEILING);
        for _ in 0..20 {
            idle.waited(CEILING);
        }
        assert_eq!(idle.window(), CEILING);
    }

    #[test]
    fn waits_longer_than_the_ceiling_shrink_the_window_to_nothing() {
        let mut idle = IdlePoll::new(CEILING);
        for _ in 0..20 {
            idle.waited(CEILING);
        }
        let mut shrunk = Vec::new();
        for _ in 0..6 {
            idle.waited(Duration::from_millis(5));
            shrunk.push(idle.window().as_micros());
        }
        assert_eq!(shrunk, [100, 50, 25, 12, 0, 0]);
    }

    #[test]
    fn a_zero_ceiling_never_looks() {
        let mut idle = IdlePoll::new(Duration::ZERO);
        idle.waited(Duration::from_micros(5));
        idle.waited(Duration::from_micros(50));
        assert_eq!(idle.window(), Duration::ZERO);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn looking_lets_other_tasks_and_timers_run() {
        let mut idle = IdlePoll::new(Duration::from_millis(20));
        for _ in 0..20 {
            idle.waited(Duration::from_millis(20));
        }
        assert_eq!(idle.window(), Duration::from_millis(20));
        // While this task looks, a timer and another task on the same thread still run.
        let other = tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            Instant::now()
        });
        let start = Instant::now();
        let looked = tokio::time::timeout(Duration::from_millis(60), idle.look(start)).await;
        assert!(looked.is_err(), "look never completes");
        let other_done = other.await.expect("the other task ran");
        assert!(other_done.duration_since(start) < Duration::from_millis(20));
    }
}
