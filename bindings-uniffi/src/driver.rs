//! `StdioDriver`: stdio served from a host thread, with the host's handlers run on it.
//!
//! The host thread loops on `next`: core's host-thread stdio loop (`toolwire::host::HostStdio`)
//! reads stdin, feeds frames to the session, polls the calls that are waiting (on this
//! thread) and writes answers to stdout; `next` returns when calls are queued for the host to
//! run, and their results come back with the following `next`. A call whose handler finishes
//! at once is read, run and answered on this one thread.

use std::sync::{Arc, Mutex};

use toolwire::host::{HostStdio, StdioWaker};

use crate::errors::ToolwireError;
use crate::queue::{Completion, Work, queue, taking_own_calls};
use crate::runtime::runtime;

/// Serves stdin/stdout from the thread that calls [`next`](Self::next) (see the module docs);
/// the Kotlin wrapper drives it through `jvm_abi`.
pub(crate) struct StdioDriver {
    stdio: Mutex<HostStdio>,
    waker: StdioWaker,
    /// Rings the driver when the host's queue gets work.
    listener: Arc<dyn Fn() + Send + Sync>,
    /// Encoded work that did not fit the caller's buffer (see `jvm_abi`).
    overflow: Mutex<Option<Vec<u8>>>,
}

impl StdioDriver {
    pub(crate) fn open(server: &toolwire::Server) -> Result<Arc<Self>, ToolwireError> {
        let stdio = HostStdio::open(server, runtime().handle().clone())?;
        let waker = stdio.waker();
        let listener: Arc<dyn Fn() + Send + Sync> = {
            let waker = waker.clone();
            Arc::new(move || waker.wake())
        };
        queue().listen(listener.clone());
        Ok(Arc::new(StdioDriver {
            stdio: Mutex::new(stdio),
            waker,
            listener,
            overflow: Mutex::new(None),
        }))
    }
}

impl StdioDriver {
    /// Hands back results of calls taken earlier, then serves until there are calls for the
    /// host to run (returned) or the session has ended (`null`/`nil`). Call it from one
    /// thread only, in a loop.
    pub(crate) fn next(&self, completions: Vec<Completion>) -> Option<Work> {
        taking_own_calls(|| {
            let mut stdio = self.stdio.lock().unwrap_or_else(|e| e.into_inner());
            // The calls these results wake are polled by the loop below: no ring needed.
            stdio.as_serving_thread(|| queue().complete(completions));
            let mut work = None;
            let host_has_work = stdio.serve_until(|| {
                let taken = queue().take_now();
                let any = !taken.calls.is_empty() || !taken.cancelled.is_empty();
                work = Some(taken);
                any
            });
            if host_has_work { work } else { None }
        })
    }

    /// Ends serving as EOF would, from any thread: calls in flight finish, then `next`
    /// returns `null`/`nil`.
    pub(crate) fn stop(&self) {
        self.waker.stop();
    }
}

impl StdioDriver {
    pub(crate) fn take_overflow(&self) -> Option<Vec<u8>> {
        self.overflow
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    pub(crate) fn keep_overflow(&self, encoded: Vec<u8>) {
        *self.overflow.lock().unwrap_or_else(|e| e.into_inner()) = Some(encoded);
    }

    /// Results that arrive while kept work is handed out: they still count.
    pub(crate) fn hand_back(&self, completions: Vec<Completion>) {
        if !completions.is_empty() {
            queue().complete(completions);
        }
    }
}

impl Drop for StdioDriver {
    fn drop(&mut self) {
        queue().unlisten(&self.listener);
    }
}
