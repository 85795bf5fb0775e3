//! `NativeConnection`: one session whose frames JavaScript carries (stdio or its own channel).
//!
//! JavaScript reads the stream and feeds it here; calls that finish at once run their JS
//! handler right inside `feed` and their answers come back as its return value, so a call
//! costs no thread hop. Frames queued later (Promise handlers, progress, timers) ring a weak
//! threadsafe function, and JavaScript takes them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use napi::Env;
use napi::bindgen_prelude::{Buffer, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use toolwire::transport::{FrameError, LineDecoder};
use toolwire::{Outbound, Server, Session};

use crate::js_thread;
use crate::runtime::runtime;

type WakeTsfn = ThreadsafeFunction<(), (), (), Status, false, true>;

#[napi]
pub struct NativeConnection {
    session: Session,
    outbound: Mutex<Outbound>,
    decoder: Mutex<LineDecoder>,
    /// Set once a wake-up is on its way to JavaScript, cleared when it takes the frames.
    wake_pending: Arc<AtomicBool>,
}

impl NativeConnection {
    pub(crate) fn open(server: &Server, on_outbound: &Function<'_, (), ()>) -> napi::Result<Self> {
        let wake: WakeTsfn = on_outbound
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let wake_pending = Arc::new(AtomicBool::new(false));
        let id = Arc::as_ptr(&wake_pending) as usize;
        let pending = wake_pending.clone();
        let (session, outbound) =
            Session::with_notifier(server, runtime().clone(), move || {
                // Inside this connection's `feed`, JavaScript takes the frames right after.
                if js_thread::is_feeding(id) || pending.swap(true, Ordering::AcqRel) {
                    return;
                }
                wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
            });
        Ok(NativeConnection {
            session,
            outbound: Mutex::new(outbound),
            decoder: Mutex::new(LineDecoder::new(server.options().max_frame_bytes)),
            wake_pending,
        })
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.wake_pending) as usize
    }

    fn frame(&self, frame: Result<&[u8], FrameError>) {
        match frame {
            Ok(bytes) => self.session.handle_frame(bytes),
            Err(_) => self.session.reject_oversize_frame(),
        }
    }

    /// Every frame queued so far, each followed by a newline.
    fn take_lines(&self) -> Option<Buffer> {
        self.wake_pending.store(false, Ordering::Release);
        let mut outbound = self.outbound.lock().unwrap_or_else(|e| e.into_inner());
        let mut bytes = Vec::new();
        while let Some(frame) = outbound.try_recv() {
            bytes.extend_from_slice(frame.as_bytes());
            bytes.push(b'\n');
        }
        (!bytes.is_empty()).then(|| Buffer::from(bytes))
    }
}

#[napi]
impl NativeConnection {
    /// Feeds bytes of a newline-delimited stream; returns the lines to write now, if any.
    #[napi]
    pub fn feed(&self, env: Env, chunk: Buffer) -> Option<Buffer> {
        js_thread::feeding(&env, self.id(), || {
            let mut decoder = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
            decoder.push(&chunk, |frame| {
                js_thread::in_handle_scope(&env, || self.frame(frame));
            });
        });
        self.take_lines()
    }

    /// The stream ended: a last line without a newline is still a frame.
    #[napi]
    pub fn end_input(&self, env: Env) -> Option<Buffer> {
        js_thread::feeding(&env, self.id(), || {
            let mut decoder = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
            decoder.finish(|frame| js_thread::in_handle_scope(&env, || self.frame(frame)));
        });
        self.take_lines()
    }

    /// Feeds one whole message (a channel that frames messages itself).
    #[napi]
    pub fn feed_message(&self, env: Env, message: Buffer) -> Vec<String> {
        js_thread::feeding(&env, self.id(), || {
            js_thread::in_handle_scope(&env, || self.session.handle_frame(&message));
        });
        self.take_messages()
    }

    /// The lines queued since the last take (newline-terminated), or `null`.
    #[napi]
    pub fn take(&self) -> Option<Buffer> {
        self.take_lines()
    }

    /// The messages queued since the last take.
    #[napi]
    pub fn take_messages(&self) -> Vec<String> {
        self.wake_pending.store(false, Ordering::Release);
        let mut outbound = self.outbound.lock().unwrap_or_else(|e| e.into_inner());
        std::iter::from_fn(|| outbound.try_recv()).collect()
    }

    /// No more input: calls in flight get the drain time (their answers still arrive), then
    /// the rest are cancelled. Resolves when the session has ended.
    #[napi]
    pub async fn shutdown(&self) {
        let session = self.session.clone();
        let _ = runtime().spawn(async move { session.shutdown().await }).await;
    }

    /// Ends at once: every call is cancelled and nothing more is sent.
    #[napi]
    pub fn close(&self) {
        self.session.close();
    }

    /// The negotiated protocol version, once initialized.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.session.protocol_version().map(|v| v.as_str().to_owned())
    }
}
