//! A server's lifespan: what the app sets up before its first call (a database pool, a client)
//! and tears down once serving has ended. The rules, the same in every language:
//!
//! - **Held by serving.** Every serve (stdio, Streamable HTTP, a mounted endpoint, a test
//!   client, an explicit hold) holds it while it runs. The first hold starts it, once however
//!   many serves arrive together; they all wait for that one start.
//! - **Calls wait until it runs.** A tool, resource, prompt or completion call that arrives
//!   while it starts waits; one that arrives with nothing holding it (a session of your own)
//!   starts it. A call never sees a lifespan that has not started.
//! - **A failed start is each waiter's error** ([`Error::Lifespan`]): every hold and call
//!   that waited for that start gets it, and the next one tries again.
//! - **Stopped after the last serve ends**, once the calls in flight have finished; its
//!   clean-up runs once. [`Server::stop`](crate::Server::stop) ends every serve, so it ends
//!   the lifespan too, even one that a call started. A later hold starts it again.
//!
//! The host keeps the value (a Python object, a JS value, a Kotlin `Any`); the engine decides
//! when [`Lifespan::start`] and [`Lifespan::stop`] run and keeps calls out until it is up.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::{Notify, watch};

use crate::Error;

/// A future a lifespan hook returns.
pub type LifespanFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a server starts before its first call and stops after serving ends (see the module's
/// rules). The engine calls each at most once per run: never `start` twice without a `stop`
/// between, and `stop` only after a `start` that succeeded.
pub trait Lifespan: Send + Sync + 'static {
    /// Sets the app up; an error (its message) is every waiting serve's and call's
    /// [`Error::Lifespan`].
    fn start(&self) -> LifespanFuture<Result<(), String>>;
    /// Tears it down; no call is in flight then, and none starts until the next `start`.
    fn stop(&self) -> LifespanFuture<()>;
}

/// The start's outcome, once known: `None` while it runs.
type StartOutcome = Option<Result<(), Arc<str>>>;

enum Phase {
    Stopped,
    Starting(watch::Receiver<StartOutcome>),
    Running,
    /// Waiting for the calls in flight, then the app's `stop`; `true` once it has returned.
    Stopping(watch::Receiver<bool>),
}

struct State {
    phase: Phase,
    /// Serves holding it.
    holders: usize,
    /// Calls running inside it.
    in_flight: usize,
    /// Serves and calls waiting for the start under way.
    waiting: usize,
    /// `Server::stop` came while it started: stopped once started, unless a serve holds it.
    stop_requested: bool,
    /// Where its start and stop run: the runtime of the hold or call that started it (a hold
    /// dropped or a `Server::stop` may come from outside any runtime).
    runtime: Option<tokio::runtime::Handle>,
}

/// One server's lifespan gate.
pub(crate) struct LifespanGate {
    /// Whether a lifespan is set: calls of a server without one (most) take no lock.
    set: AtomicBool,
    hooks: Mutex<Option<Arc<dyn Lifespan>>>,
    state: Mutex<State>,
    /// Told when the last call in flight ends.
    drained: Notify,
    /// How long a stop waits for the calls in flight (the server's `drain_timeout`): a task
    /// of the tasks extension may run for an hour, and a shutdown must not wait for it.
    drain_timeout: Duration,
}

enum Wait<'a> {
    /// Counted among the start's waiters in the same lock as it saw the start: a start that
    /// ends on another worker meanwhile must not find nobody waiting and stop again.
    Start(watch::Receiver<StartOutcome>, Waiting<'a>),
    Stop(watch::Receiver<bool>),
}

/// Whether a ready lifespan counts the waiter as a serve or a call.
#[derive(Clone, Copy)]
enum Role {
    Hold,
    Call,
}

impl LifespanGate {
    pub(crate) fn new(drain_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            set: AtomicBool::new(false),
            hooks: Mutex::new(None),
            state: Mutex::new(State {
                phase: Phase::Stopped,
                holders: 0,
                in_flight: 0,
                waiting: 0,
                stop_requested: false,
                runtime: None,
            }),
            drained: Notify::new(),
            drain_timeout,
        })
    }

    pub(crate) fn set(&self, hooks: Option<Arc<dyn Lifespan>>) {
        let is_set = hooks.is_some();
        *self.hooks.lock().unwrap_or_else(|e| e.into_inner()) = hooks;
        self.set.store(is_set, Ordering::Release);
    }

    fn hooks(&self) -> Option<Arc<dyn Lifespan>> {
        self.hooks.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a lifespan is set (a call's one check when none is).
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Holds it for a serve: started (or waited for) first.
    pub(crate) async fn hold(self: &Arc<Self>) -> Result<LifespanHold, Error> {
        self.ready(Role::Hold).await?;
        Ok(LifespanHold {
            gate: Some(self.clone()),
        })
    }

    /// Lets a call in: started (or waited for) first.
    pub(crate) async fn call(self: &Arc<Self>) -> Result<CallInside, Error> {
        self.ready(Role::Call).await?;
        Ok(CallInside { gate: self.clone() })
    }

    async fn ready(self: &Arc<Self>, role: Role) -> Result<(), Error> {
        loop {
            let wait = {
                let mut state = self.state();
                match &state.phase {
                    Phase::Running => {
                        count_in(&mut state, role);
                        return Ok(());
                    }
                    Phase::Starting(outcome) => {
                        let outcome = outcome.clone();
                        Wait::Start(outcome, Waiting::counted(self, &mut state))
                    }
                    Phase::Stopping(stopped) => Wait::Stop(stopped.clone()),
                    Phase::Stopped => match self.hooks() {
                        // Nothing to start: a hold is counted all the same, so that a lifespan
                        // set later stops when these serves end.
                        None => {
                            count_in(&mut state, role);
                            return Ok(());
                        }
                        Some(hooks) => {
                            let outcome = self.begin_start(&mut state, hooks);
                            Wait::Start(outcome, Waiting::counted(self, &mut state))
                        }
                    },
                }
            };
            match wait {
                Wait::Start(mut outcome, waiting) => {
                    let known = outcome.wait_for(Option::is_some).await.map(|o| o.clone());
                    drop(waiting);
                    match known {
                        Ok(Some(Err(message))) => return Err(Error::Lifespan(message.to_string())),
                        // Started: counted in on the next turn (unless it is stopping again).
                        Ok(_) => {}
                        // Its task was dropped (its runtime shut down), which set it stopped.
                        Err(_) => {
                            return Err(Error::Lifespan(
                                "its start was abandoned (the runtime running it shut down)".into(),
                            ));
                        }
                    }
                }
                // Stopped, or its task was dropped (which set it stopped): the next turn sees.
                Wait::Stop(mut stopped) => {
                    let _ = stopped.wait_for(|done| *done).await;
                }
            }
        }
    }

    /// Starts it on a task of its own, so a waiter given up does not abandon the start.
    fn begin_start(
        self: &Arc<Self>,
        state: &mut State,
        hooks: Arc<dyn Lifespan>,
    ) -> watch::Receiver<StartOutcome> {
        let (tell, outcome) = watch::channel(None);
        state.phase = Phase::Starting(outcome.clone());
        state.stop_requested = false;
        let runtime = here(state);
        state.runtime = Some(runtime.clone());
        let gate = self.clone();
        runtime.spawn(async move {
            let mut unfinished = StoppedIfDropped(Some(gate.clone()));
            let started = match AssertUnwindSafe(hooks.start()).catch_unwind().await {
                Ok(started) => started.map_err(Arc::<str>::from),
                Err(_) => Err(Arc::from("its start panicked")),
            };
            unfinished.0 = None;
            let mut state = gate.state();
            state.phase = if started.is_ok() {
                Phase::Running
            } else {
                Phase::Stopped
            };
            let _ = tell.send(Some(started));
            // Started for nobody (every waiter gave up) or told to stop meanwhile: stopped
            // again, unless a serve holds it by now.
            let unwanted = state.waiting == 0 || state.stop_requested;
            if matches!(state.phase, Phase::Running) && state.holders == 0 && unwanted {
                let _ = gate.begin_stop(&mut state);
            }
        });
        outcome
    }

    /// One serve fewer; the last one stops it (after the calls in flight). Returns the stop's
    /// end, to wait for, when this release began it or one is under way.
    fn release(self: &Arc<Self>) -> Option<watch::Receiver<bool>> {
        let mut state = self.state();
        state.holders = state.holders.saturating_sub(1);
        if state.holders > 0 {
            return None;
        }
        self.begin_stop(&mut state)
    }

    /// Stops a running lifespan that no serve holds ([`Server::stop`](crate::Server::stop):
    /// one a call started).
    pub(crate) fn stop_unheld(self: &Arc<Self>) {
        let mut state = self.state();
        if state.holders > 0 {
            return;
        }
        if matches!(state.phase, Phase::Starting(_)) {
            state.stop_requested = true;
        } else {
            let _ = self.begin_stop(&mut state);
        }
    }

    fn begin_stop(self: &Arc<Self>, state: &mut State) -> Option<watch::Receiver<bool>> {
        match &state.phase {
            Phase::Running => {}
            Phase::Stopping(stopped) => return Some(stopped.clone()),
            // A start under way ends in `Running`; the serve that comes next (or
            // `Server::stop`) stops it. Nothing runs when stopped.
            Phase::Starting(_) | Phase::Stopped => return None,
        }
        let hooks = self.hooks()?;
        let runtime = here(state);
        let (tell, stopped) = watch::channel(false);
        state.phase = Phase::Stopping(stopped.clone());
        let gate = self.clone();
        runtime.spawn(async move {
            let unfinished = StoppedIfDropped(Some(gate.clone()));
            let drained = async {
                loop {
                    // Registered before the count is read: a last call ending in between
                    // is not missed.
                    let mut told = std::pin::pin!(gate.drained.notified());
                    told.as_mut().enable();
                    if gate.state().in_flight == 0 {
                        break;
                    }
                    told.await;
                }
            };
            if tokio::time::timeout(gate.drain_timeout, drained)
                .await
                .is_err()
            {
                tracing::warn!(
                    calls = gate.state().in_flight,
                    "the lifespan stops with calls still in flight (drain_timeout passed)"
                );
            }
            if AssertUnwindSafe(hooks.stop()).catch_unwind().await.is_err() {
                tracing::error!("the lifespan's stop panicked");
            }
            drop(unfinished);
            let _ = tell.send(true);
        });
        Some(stopped)
    }
}

/// Lets a call in ([`LifespanGate::call`]), or `None` when it is cancelled while it waits.
pub(crate) async fn call_inside(
    gate: &Arc<LifespanGate>,
    cancel: &crate::cancel::CallCancel,
) -> Option<Result<CallInside, Error>> {
    tokio::select! {
        biased;
        () = cancel.for_call() => None,
        inside = gate.call() => Some(inside),
    }
}

/// Where a start or stop runs: the runtime of the caller, else the one of the last start (a
/// hold dropped or a `Server::stop` outside any runtime), else the engine's own.
fn here(state: &State) -> tokio::runtime::Handle {
    tokio::runtime::Handle::try_current()
        .ok()
        .or_else(|| state.runtime.clone())
        .unwrap_or_else(|| crate::runtime::runtime().handle().clone())
}

/// Sets the gate stopped when a start or stop task ends, or is dropped unfinished (its runtime
/// shut down): the gate is never left starting or stopping for good.
struct StoppedIfDropped(Option<Arc<LifespanGate>>);

impl Drop for StoppedIfDropped {
    fn drop(&mut self) {
        if let Some(gate) = self.0.take() {
            gate.state().phase = Phase::Stopped;
        }
    }
}

/// One serve or call waiting for a start, counted while it waits (one given up leaves).
struct Waiting<'a>(&'a LifespanGate);

impl<'a> Waiting<'a> {
    /// Counted under the lock the caller holds (the one that saw or began the start).
    fn counted(gate: &'a LifespanGate, state: &mut State) -> Self {
        state.waiting += 1;
        Waiting(gate)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.waiting = state.waiting.saturating_sub(1);
    }
}

fn count_in(state: &mut State, role: Role) {
    match role {
        Role::Hold => state.holders += 1,
        Role::Call => state.in_flight += 1,
    }
}

/// A serve's hold on the lifespan ([`Server::hold_lifespan`](crate::Server::hold_lifespan)).
/// [`release`](Self::release) lets go and, for the last hold, waits until the lifespan has
/// stopped; dropped, it lets go without waiting.
#[must_use = "the lifespan stops when the last hold is released or dropped"]
pub struct LifespanHold {
    gate: Option<Arc<LifespanGate>>,
}

impl LifespanHold {
    /// Lets go; when this was the last hold, returns once the lifespan's clean-up has run
    /// (after the calls in flight).
    pub async fn release(mut self) {
        if let Some(gate) = self.gate.take()
            && let Some(mut stopped) = gate.release()
        {
            let _ = stopped.wait_for(|done| *done).await;
        }
    }
}

impl Drop for LifespanHold {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            let _ = gate.release();
        }
    }
}

impl std::fmt::Debug for LifespanHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LifespanHold")
    }
}

/// A call inside the lifespan: it does not stop until this ends.
pub(crate) struct CallInside {
    gate: Arc<LifespanGate>,
}

impl Drop for CallInside {
    fn drop(&mut self) {
        let mut state = self.gate.state();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            drop(state);
            self.gate.drained.notify_waiters();
        }
    }
}
