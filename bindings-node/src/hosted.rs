//! Sessions hosted on the JS thread for readers that await their outbound frames themselves
//! (core's client, `client.rs`; core's vector replayer, `vectors.rs`), driven from the engine's
//! runtime: calls still pending after their first poll are polled on the JS thread, inside
//! [`js_thread::feeding`], so that handlers are called directly, as in a `connect()` session.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use napi::Env;
use toolwire::host::{HostHooks, LocalExecutor};
use toolwire::{Outbound, Server, Session};

use crate::connection::drain_calls;
use crate::js_thread::{self, Hop};
use crate::runtime::runtime;

/// Turns of the JS thread for one hosted session: its calls still pending after their first
/// poll are polled there.
struct Turns {
    executor: OnceLock<Weak<LocalExecutor>>,
    /// Set once a turn is queued, cleared when it starts.
    queued: AtomicBool,
    hop: Arc<Hop>,
}

impl Turns {
    fn id(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Asks the JS thread for a turn, once until it takes it; none while it is draining these
    /// calls (it looks again afterwards).
    fn ring(self: &Arc<Self>) {
        if js_thread::is_feeding(self.id()) || self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let turns = self.clone();
        // Queued, never run in place: a waker may fire while its waker's owner holds a lock.
        self.hop.queue(move |env| turns.take(env));
    }

    fn take(self: &Arc<Self>, env: &Env) {
        self.queued.store(false, Ordering::Release);
        let Some(executor) = self.executor.get().and_then(Weak::upgrade) else {
            return;
        };
        js_thread::feeding(env, self.id(), || drain_calls(&executor));
        // Woken during the drain (the rings were skipped), or more than its rounds.
        if executor.has_work() {
            self.ring();
        }
    }
}

/// A new session of `server` hosted on the JS thread of `env` (see the module's
/// documentation), its outbound frames, and the hop onto that thread it uses. Its `notify`
/// does nothing: the caller reads the outbound itself.
pub(crate) fn session(env: &Env, server: &Server) -> napi::Result<(Session, Outbound, Arc<Hop>)> {
    let hop = Arc::new(Hop::new(env)?);
    let turns = Arc::new(Turns {
        executor: OnceLock::new(),
        queued: AtomicBool::new(false),
        hop: hop.clone(),
    });
    let executor = LocalExecutor::new({
        let turns = turns.clone();
        move || turns.ring()
    });
    // Weak: the executor's ring owns the turns.
    let _ = turns.executor.set(Arc::downgrade(&executor));
    let hooks = HostHooks {
        notify: Box::new(|| {}),
        spawn_call: Some(Box::new(move |task| executor.spawn(task))),
    };
    let (session, outbound) = Session::hosted(server, runtime().clone(), hooks);
    Ok((session, outbound, hop))
}
