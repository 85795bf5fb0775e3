//! `NativeConnection`: one session whose frames JavaScript carries (stdio or its own channel).
//!
//! Inbound bytes are fed on the JS thread by JavaScript (a channel of its own, or stdio when it
//! is neither a pipe nor a socket; pipes and sockets are `stdio.rs`'s); calls that finish at once run their JS handler right inside the feed and their
//! answers are taken right after, so a call costs no thread hop. Frames queued later (Promise
//! handlers, progress, timers) ring a weak threadsafe function, and JavaScript takes them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use napi::Env;
use napi::Status;
use napi::bindgen_prelude::{Buffer, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use toolwire::host::LineDecoder;
use toolwire::host::{HostHooks, LocalExecutor};
use toolwire::transport::FrameError;
use toolwire::{Outbound, Server, Session};

use crate::js_thread;
use crate::runtime::runtime;

type WakeTsfn = ThreadsafeFunction<(), (), (), Status, false, true>;

/// The connection's state.
pub(crate) struct ConnectionCore {
    pub(crate) session: Session,
    outbound: Mutex<Outbound>,
    decoder: Mutex<LineDecoder>,
    /// Set once a wake-up is on its way to JavaScript, cleared when it takes the frames.
    wake_pending: Arc<AtomicBool>,
    /// The calls that did not finish at once, polled on the JS thread.
    pub(crate) executor: Arc<LocalExecutor>,
    /// Never called: referenced while calls are unfinished, it keeps Node's event loop
    /// running for them (see [`keep_loop_for_calls`](Self::keep_loop_for_calls)).
    loop_keeper: Mutex<WakeTsfn>,
    /// Whether `loop_keeper` is referenced now.
    keeping_loop: AtomicBool,
    /// Asks the JS thread for a turn (once until it takes it), even from inside a feed.
    ring: Arc<dyn Fn() + Send + Sync>,
}

/// Rounds of polling pending calls per turn (calls may wake each other).
const DRAIN_ROUNDS: usize = 64;

impl ConnectionCore {
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.wake_pending) as usize
    }

    fn frame(&self, frame: Result<&[u8], FrameError>) {
        match frame {
            Ok(bytes) => self.session.handle_frame(bytes),
            Err(_) => self.session.reject_oversize_frame(),
        }
    }

    /// Feeds stream bytes on the JS thread of `env` (handlers may run right here).
    pub(crate) fn feed(&self, env: &Env, bytes: &[u8]) {
        js_thread::feeding(env, self.id(), || {
            {
                let mut decoder = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
                decoder.push(bytes, |frame| self.frame(frame));
            }
            self.drain();
        });
    }

    /// The stream ended: a last line without a newline is still a frame.
    pub(crate) fn end_input(&self, env: &Env) {
        js_thread::feeding(env, self.id(), || {
            {
                let mut decoder = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
                decoder.finish(|frame| self.frame(frame));
            }
            self.drain();
        });
    }

    /// Polls the pending calls that were woken (inside [`js_thread::feeding`]); calls still
    /// ready after its rounds get another turn.
    pub(crate) fn drain(&self) {
        drain_calls(&self.executor);
        if self.executor.has_work() {
            (self.ring)();
        }
    }

    /// Keeps Node's event loop running while a call is unfinished, and lets it go when none
    /// is: a call waiting on the engine (a lifespan start, a deadline) is woken from another
    /// thread through a weak threadsafe function, which a loop with nothing else to do would
    /// not wait for. Called at the end of every turn on the JS thread, the only thread that
    /// may change it.
    fn keep_loop_for_calls(&self, env: &Env) {
        let busy = self.executor.unfinished() > 0;
        if self.keeping_loop.load(Ordering::Acquire) == busy {
            return;
        }
        let mut keeper = self.loop_keeper.lock().unwrap_or_else(|e| e.into_inner());
        #[allow(deprecated)] // `unref`: the only way to let go of a loop while keeping the function
        let changed = if busy {
            keeper.refer(env)
        } else {
            keeper.unref(env)
        };
        if changed.is_ok() {
            self.keeping_loop.store(busy, Ordering::Release);
        }
    }

    /// Every frame queued so far, each followed by a newline.
    fn take_lines(&self) -> Vec<u8> {
        self.wake_pending.store(false, Ordering::Release);
        let mut outbound = self.outbound.lock().unwrap_or_else(|e| e.into_inner());
        let Some(first) = outbound.try_recv() else {
            return Vec::new();
        };
        // Usually one frame: it becomes the buffer itself.
        let mut bytes = first.into_bytes();
        bytes.push(b'\n');
        while let Some(frame) = outbound.try_recv() {
            bytes.extend_from_slice(frame.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    }

    /// Takes the queued lines, or `None`.
    pub(crate) fn flush(&self) -> Option<Buffer> {
        let bytes = self.take_lines();
        (!bytes.is_empty()).then(|| Buffer::from(bytes))
    }
}

/// Polls `executor`'s woken calls, a few rounds (calls may wake each other); call it inside
/// [`js_thread::feeding`], so that handlers are called directly.
pub(crate) fn drain_calls(executor: &LocalExecutor) {
    for _ in 0..DRAIN_ROUNDS {
        if !executor.has_work() {
            break;
        }
        // Calls create tokio timers (deadlines, requests to the client) as they go.
        let _runtime = runtime().enter();
        executor.run_ready();
    }
}

#[napi]
pub struct NativeConnection {
    core: Arc<ConnectionCore>,
}

impl NativeConnection {
    pub(crate) fn open(server: &Server, on_outbound: &Function<'_, (), ()>) -> napi::Result<Self> {
        let weak_function = || {
            on_outbound
                .build_threadsafe_function::<()>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()
        };
        let wake: Arc<WakeTsfn> = Arc::new(weak_function()?);
        let loop_keeper = Mutex::new(weak_function()?);
        let wake_pending = Arc::new(AtomicBool::new(false));
        let id = Arc::as_ptr(&wake_pending) as usize;
        // Asks the JS thread for a turn, once until it takes it.
        let ring: Arc<dyn Fn() + Send + Sync> = {
            let pending = wake_pending.clone();
            Arc::new(move || {
                if !pending.swap(true, Ordering::AcqRel) {
                    wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
                }
            })
        };
        // Inside this connection's feed, frames are taken and woken calls polled right after.
        let ring_unless_feeding = {
            let ring = ring.clone();
            move || {
                if !js_thread::is_feeding(id) {
                    ring();
                }
            }
        };
        let executor = LocalExecutor::new(ring_unless_feeding.clone());
        let hooks = HostHooks {
            notify: Box::new(ring_unless_feeding),
            spawn_call: Some(Box::new({
                let executor = executor.clone();
                move |task| executor.spawn(task)
            })),
        };
        let (session, outbound) = Session::hosted(server, runtime().clone(), hooks);
        Ok(NativeConnection {
            core: Arc::new(ConnectionCore {
                session,
                outbound: Mutex::new(outbound),
                decoder: Mutex::new(LineDecoder::new(server.options().max_frame_bytes)),
                wake_pending,
                executor,
                loop_keeper,
                keeping_loop: AtomicBool::new(false),
                ring,
            }),
        })
    }
}

#[napi]
impl NativeConnection {
    /// Feeds bytes of a newline-delimited stream; returns the lines to write now, if any.
    #[napi]
    pub fn feed(&self, env: Env, chunk: Buffer) -> Option<Buffer> {
        self.core.feed(&env, &chunk);
        self.core.keep_loop_for_calls(&env);
        self.core.flush()
    }

    /// The stream ended: a last line without a newline is still a frame.
    #[napi]
    pub fn end_input(&self, env: Env) -> Option<Buffer> {
        self.core.end_input(&env);
        self.core.keep_loop_for_calls(&env);
        self.core.flush()
    }

    /// Feeds one whole message (a channel that frames messages itself).
    #[napi]
    pub fn feed_message(&self, env: Env, message: Buffer) -> Vec<String> {
        let core = &self.core;
        js_thread::feeding(&env, core.id(), || {
            core.session.handle_frame(&message);
            core.drain();
        });
        core.keep_loop_for_calls(&env);
        self.messages()
    }

    /// The JS thread's turn: polls the pending calls that were woken, then returns the lines
    /// queued since the last take (newline-terminated), or `null`; when serving stdio natively
    /// they are written to stdout instead.
    #[napi]
    pub fn take(&self, env: Env) -> Option<Buffer> {
        self.core.wake_pending.store(false, Ordering::Release);
        js_thread::feeding(&env, self.core.id(), || self.core.drain());
        self.core.keep_loop_for_calls(&env);
        self.core.flush()
    }

    /// [`take`](Self::take) for a channel of messages: the messages queued since the last take.
    #[napi]
    pub fn take_messages(&self, env: Env) -> Vec<String> {
        // Cleared before the drain, as in `take`: a call woken during it rings again (cleared
        // after, that ring would be lost, and the call never polled).
        self.core.wake_pending.store(false, Ordering::Release);
        js_thread::feeding(&env, self.core.id(), || self.core.drain());
        self.core.keep_loop_for_calls(&env);
        self.messages()
    }
}

impl NativeConnection {
    fn messages(&self) -> Vec<String> {
        let mut outbound = self.core.outbound.lock().unwrap_or_else(|e| e.into_inner());
        std::iter::from_fn(|| outbound.try_recv()).collect()
    }
}

#[napi]
impl NativeConnection {
    /// No more input: calls in flight get the drain time (their answers still arrive), then
    /// the rest are cancelled. Resolves when the session has ended.
    #[napi]
    pub async fn shutdown(&self) {
        let session = self.core.session.clone();
        let _ = runtime()
            .spawn(async move { session.shutdown().await })
            .await;
    }

    /// Ends at once: every call is cancelled and nothing more is sent.
    #[napi]
    pub fn close(&self) {
        self.core.session.close();
    }

    /// The negotiated protocol version, once initialized.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.core
            .session
            .protocol_version()
            .map(|v| v.as_str().to_owned())
    }
}
