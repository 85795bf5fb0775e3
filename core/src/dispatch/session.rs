//! One client connection's state: its calls in flight, its outbound channel, its shutdown.
//!
//! A transport feeds frames in with [`Session::handle_frame`] and takes frames out of the
//! paired [`Outbound`]. That pair is also the "bring your own transport" entry point.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Server;
use super::hooks::{CallTask, HostHooks};
use super::outbound::{Backlog, FrameSink, Notify, OutboundSender};
use super::peer::PeerRequests;
use super::request_stream::RequestStream;
use super::router;
use super::server::ServerInner;
use crate::Error;
use crate::cancel::CallCancel;
use crate::catalog::visibility::Viewer;
use crate::limiter::Limiter;
use crate::metrics::LiveGauge;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion};
use crate::wire::{ErrorObject, Frame, Inbound, Parsed, RequestId, error_frame, parse_inbound};

/// What `initialize` settled.
pub(crate) struct Negotiated {
    pub(crate) version: ProtocolVersion,
    pub(crate) client_info: Implementation,
    pub(crate) client_capabilities: Value,
    /// Assumed, not negotiated (stateless HTTP): the client's capabilities are unknown, not
    /// empty.
    pub(crate) assumed: bool,
}

pub(super) struct InflightCall {
    serial: u64,
    pub(super) cancel: Arc<CallCancel>,
}

pub(crate) struct SessionShared {
    pub(crate) server: Arc<ServerInner>,
    pub(super) out: OutboundSender,
    pub(crate) negotiated: OnceLock<Negotiated>,
    /// The connection took a 2026-07-28 request first: it is modern for good.
    pub(crate) modern: AtomicBool,
    /// Who the transport authenticated (HTTP bearer auth), bound into `requestState` and tasks.
    /// Set with [`SessionShared::authenticated`].
    pub(crate) principal: Option<String>,
    /// Who the transport says the client is (its token's subject, scopes and tags): what
    /// decides the catalog it sees. Its subject is `principal`'s.
    identity: RwLock<Arc<Viewer>>,
    /// What it last saw of each list, when lists are screened.
    pub(crate) seen: Arc<super::visibility::Seen>,
    /// The principal's share of the server's call slots, held while this session lives.
    pub(crate) principal_limiter: Option<Arc<Limiter>>,
    pub(super) initialized: AtomicBool,
    pub(super) log_level: AtomicU8,
    inflight: Mutex<HashMap<RequestId, InflightCall>>,
    next_serial: AtomicU64,
    pub(crate) peer: PeerRequests,
    pub(crate) tasks: TaskTracker,
    pub(crate) shutdown: CancellationToken,
    /// Cancelled when a graceful shutdown begins: long-lived answers (listen streams) end.
    pub(crate) draining: CancellationToken,
    pub(crate) runtime: Handle,
    pub(crate) spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
    /// Resource URIs this client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    /// This session's share of the server's call slots; none for a session made for one
    /// exchange (it has one request).
    pub(crate) call_limiter: Option<Limiter>,
    /// Counts this session among the server's live ones, from `initialize` until it ends.
    pub(super) counted: Mutex<Option<LiveGauge>>,
    /// Its place among the sessions that hear of the server's changes (none: it hears none).
    watch_key: Option<u64>,
}

/// One client's session. Cheap to clone; clones refer to the same session.
#[derive(Clone)]
pub struct Session {
    pub(super) shared: Arc<SessionShared>,
}

/// The session's outbound frames, in order: compact single-line JSON texts to write to the
/// client. Ends (`None`) once the session has shut down and everything was taken.
pub struct Outbound {
    rx: UnboundedReceiver<String>,
    shutdown: CancellationToken,
    backlog: Arc<Backlog>,
}

impl Outbound {
    /// The next frame; `None` after shutdown, once drained.
    pub async fn recv(&mut self) -> Option<String> {
        let frame = tokio::select! {
            biased;
            frame = self.rx.recv() => frame,
            () = self.shutdown.cancelled() => self.rx.try_recv().ok(),
        };
        self.took(frame)
    }

    /// The next frame if one is ready now.
    pub fn try_recv(&mut self) -> Option<String> {
        let frame = self.rx.try_recv().ok();
        self.took(frame)
    }

    fn took(&self, frame: Option<String>) -> Option<String> {
        if let Some(frame) = &frame {
            self.backlog.taken(frame.len());
        }
        frame
    }

    /// The bytes queued and not taken yet, shared with the session that queues them.
    pub(crate) fn backlog(&self) -> Arc<Backlog> {
        self.backlog.clone()
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A new session whose calls run on `runtime`.
    pub fn with_runtime(server: &Server, runtime: Handle) -> (Session, Outbound) {
        Self::build(server, runtime, None, Viewer::default())
    }

    /// A new session on the current runtime for a client the transport authenticated as
    /// `who`.
    pub(crate) fn authenticated(
        server: &Server,
        who: Viewer,
    ) -> Result<(Session, Outbound), Error> {
        Ok(Self::build(server, current_runtime()?, None, who))
    }

    /// A session driven from a host's own event loop (a JS engine's, a UI thread's): see
    /// [`HostHooks`].
    pub fn hosted(server: &Server, runtime: Handle, hooks: HostHooks) -> (Session, Outbound) {
        Self::build(server, runtime, Some(hooks), Viewer::default())
    }

    /// A new session on the current runtime, for a client the transport authenticated as
    /// `who`, whose frames not tied to a request go straight to `sink` (no channel, no task
    /// reading one).
    pub(crate) fn authenticated_into(
        server: &Server,
        who: Viewer,
        sink: FrameSink,
    ) -> Result<Session, Error> {
        let shared =
            SessionShared::new(server, current_runtime()?, OutboundSender::Sink(sink), None)
                .authenticated(who);
        Ok(Self::watching(server, shared))
    }

    fn build(
        server: &Server,
        runtime: Handle,
        hooks: Option<HostHooks>,
        who: Viewer,
    ) -> (Session, Outbound) {
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::default());
        let (notify, spawn_call) = match hooks {
            Some(hooks) => (Some(Notify::from(hooks.notify)), hooks.spawn_call),
            None => (None, None),
        };
        let out = OutboundSender::new(tx, notify, backlog.clone());
        let shared = SessionShared::new(server, runtime, out, spawn_call).authenticated(who);
        let shutdown = shared.shutdown.clone();
        (
            Self::watching(server, shared),
            Outbound {
                rx,
                shutdown,
                backlog,
            },
        )
    }

    /// The session, among those that hear of the server's changes from now on.
    fn watching(server: &Server, mut shared: SessionShared) -> Session {
        let watchers = &server.inner.watchers;
        let key = watchers.key();
        shared.watch_key = Some(key);
        let shared = Arc::new(shared);
        watchers.join(key, &shared);
        Session { shared }
    }

    /// Who the client is, as far as what it sees goes: the scopes and tags of `who` decide
    /// which tools, resources, templates and prompts it is shown from its next request on (a
    /// transport that authenticates each request tells it each request's). The subject stays
    /// the one the session was opened for. When what it sees changes, it is sent `list_changed`.
    pub fn identify(&self, who: Viewer) {
        let shared = &self.shared;
        // Compared as sets: a validator may give the same scopes in another order each time.
        let (scopes, tags) = (as_set(who.scopes), as_set(who.tags));
        let current = shared.identity();
        if current.scopes == scopes && current.tags == tags {
            return;
        }
        let subject = current.subject.clone();
        *shared.identity.write().unwrap_or_else(|e| e.into_inner()) =
            Arc::new(Viewer::new(subject, scopes, tags));
        if shared.initialized.load(Ordering::Acquire) && shared.server.catalog.screens() {
            super::visibility::announce_lists(shared, super::visibility::List::ALL.to_vec());
        }
    }

    /// Processes one inbound frame (one JSON text, without the line terminator).
    ///
    /// Never blocks: tool calls (and what waits for the server's visibility rule) are spawned,
    /// everything else is answered at once. A frame fed after the session ended is dropped.
    pub fn handle_frame(&self, frame: &[u8]) {
        let shared = &self.shared;
        // An ended session sends nothing more, answers included.
        if shared.shutdown.is_cancelled() {
            return;
        }
        match parse_inbound(frame, &shared.server.limits) {
            Parsed::Call(call) => router::dispatch_plain_call(shared, call, &shared.out),
            Parsed::Frame(frame) => router::dispatch_frame(shared, frame, &shared.out),
        }
    }

    /// Answers a frame the transport refused for its size (it never reached the parser).
    pub fn reject_oversize_frame(&self) {
        let limit = self.shared.server.limits.max_frame_bytes;
        self.shared.send(error_frame(
            None,
            &ErrorObject::invalid_request(format!(
                "Invalid request: frame exceeds the limit of {limit} bytes"
            )),
        ));
    }

    /// The negotiated protocol version, once `initialize` succeeded.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.negotiated.get().map(|n| n.version)
    }

    /// The client's `clientInfo`, once `initialize` succeeded.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.shared.negotiated.get().map(|n| &n.client_info)
    }

    /// Tool calls in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.shared.inflight_table().len()
    }

    /// Ends the session gracefully: no new work is taken, calls in flight get the server's
    /// `drain_timeout` to finish (their answers are still sent), then the rest are cancelled
    /// and the outbound stream ends.
    pub async fn shutdown(&self) {
        let shared = &self.shared;
        shared.tasks.close();
        shared.draining.cancel();
        let drain = shared.server.options.drain_timeout;
        if tokio::time::timeout(drain, shared.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                in_flight = shared.inflight_table().len(),
                "drain deadline passed; cancelling the remaining calls"
            );
            shared.cancel_all();
            shared.tasks.wait().await;
        }
        shared.peer.close_all();
        shared.shutdown.cancel();
        shared.uncount();
    }

    /// Ends the session at once: every call is cancelled and nothing more is sent.
    pub fn close(&self) {
        self.shared.tasks.close();
        self.shared.cancel_all();
        self.shared.peer.close_all();
        self.shared.shutdown.cancel();
        self.shared.uncount();
    }

    // What the HTTP transport needs beyond frame in, frame out: answers routed to a request's
    // own stream, how many answers to wait for, sessions that stand for one exchange.

    /// A session for one exchange that stands alone (stateless HTTP), on the current runtime.
    /// Whatever it sends that is not tied to the exchange's request has nowhere to go, so it
    /// has no channel of its own and watches nothing: each request is spared a channel, a
    /// watcher task and three subscriptions to channels that every session shares.
    pub(crate) fn for_one_exchange(server: &Server, who: Viewer) -> Result<Session, Error> {
        let shared = SessionShared::new(server, current_runtime()?, OutboundSender::Nowhere, None)
            .authenticated(who);
        Ok(Session {
            shared: Arc::new(shared),
        })
    }

    /// A session for one 2026-07-28 exchange, on the current runtime: modern from the start,
    /// with the principal the transport authenticated (bound into `requestState`).
    pub(crate) fn for_modern_exchange(server: &Server, who: Viewer) -> Result<Session, Error> {
        let session = Self::for_one_exchange(server, who)?;
        session.shared.modern.store(true, Ordering::Release);
        Ok(session)
    }

    /// A graceful end begins: long-lived answers (listen streams) close with their result.
    pub(crate) fn begin_drain(&self) {
        self.shared.draining.cancel();
    }

    /// Processes one parsed frame whose answers and related frames go to `stream` (or, without
    /// one, to the session's outbound channel).
    pub(crate) fn handle_parsed(&self, frame: Frame, stream: Option<Arc<RequestStream>>) {
        match stream {
            Some(stream) => {
                router::dispatch_frame(&self.shared, frame, &OutboundSender::Stream(stream))
            }
            None => router::dispatch_frame(&self.shared, frame, &self.shared.out),
        }
    }

    /// How many answers `frame` will get on its stream: one per request (a batch's come as one
    /// array; a batch this session's version does not take gets its one error).
    pub(crate) fn answers_expected(&self, frame: &Frame) -> usize {
        match frame {
            Frame::Single(Ok(Inbound::Request { .. })) => 1,
            Frame::Single(Ok(_)) => 0,
            Frame::Single(Err(rejection)) => usize::from(rejection.reply),
            Frame::Batch(_) if !self.shared.batches_allowed() => 1,
            Frame::Batch(items) => usize::from(items.iter().any(|item| match item {
                Ok(Inbound::Request { .. }) => true,
                Ok(_) => false,
                Err(rejection) => rejection.reply,
            })),
        }
    }

    /// Marks the session initialized at `version` without a handshake (stateless HTTP, where
    /// each exchange stands alone).
    pub(crate) fn assume_initialized(&self, version: ProtocolVersion) {
        let _ = self.shared.negotiated.set(Negotiated {
            version,
            client_info: Implementation::new("unknown", "unknown"),
            client_capabilities: json!({}),
            assumed: true,
        });
        self.shared.initialized.store(true, Ordering::Release);
    }
}

/// Sorted, without repeats.
fn as_set(mut items: Vec<String>) -> Vec<String> {
    items.sort_unstable();
    items.dedup();
    items
}

pub(super) fn current_runtime() -> Result<Handle, Error> {
    Handle::try_current().map_err(|e| Error::NoRuntime(e.to_string()))
}

impl SessionShared {
    /// Who the transport last said the client is (see [`Session::identify`]).
    pub(crate) fn identity(&self) -> Arc<Viewer> {
        self.identity
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether tools only an MCP Apps view calls are hidden from this request (absent from
    /// `tools/list`, unknown to `tools/call`): its client said it renders no views, in the
    /// 2026-07-28 request's own capabilities or else the session's. A session whose
    /// capabilities are unknown (stateless HTTP) is not refused a tool its host may show.
    pub(crate) fn hides_app_only_tools(&self, modern: Option<&super::modern::Envelope>) -> bool {
        let renders = crate::protocol::apps::renders;
        match (modern, self.negotiated.get()) {
            (Some(envelope), _) => !renders(&envelope.client_capabilities),
            (None, Some(negotiated)) => {
                !negotiated.assumed && !renders(&negotiated.client_capabilities)
            }
            (None, None) => true,
        }
    }

    pub(super) fn new(
        server: &Server,
        runtime: Handle,
        out: OutboundSender,
        spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
    ) -> Self {
        let options = &server.inner.options;
        let call_limiter = (!matches!(out, OutboundSender::Nowhere)).then(|| {
            Limiter::sharing_queue(
                options.max_concurrent_calls_per_session,
                options.max_queued_calls,
                server.inner.queued_calls.clone(),
            )
        });
        SessionShared {
            server: server.inner.clone(),
            out,
            negotiated: OnceLock::new(),
            counted: Mutex::new(None),
            modern: AtomicBool::new(false),
            principal: None,
            identity: RwLock::default(),
            seen: Arc::default(),
            principal_limiter: None,
            initialized: AtomicBool::new(false),
            log_level: AtomicU8::new(server.inner.options.default_log_level.index()),
            inflight: Mutex::new(HashMap::new()),
            next_serial: AtomicU64::new(0),
            peer: PeerRequests::default(),
            tasks: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            draining: CancellationToken::new(),
            runtime,
            call_limiter,
            spawn_call,
            subscriptions: Mutex::new(HashSet::new()),
            watch_key: None,
        }
    }

    /// This session speaks for `who`: its subject (when there is one) is bound to its
    /// `requestState` and tasks, and its calls count against the subject's limit; its scopes
    /// and tags decide what of the catalog it sees.
    pub(super) fn authenticated(mut self, who: Viewer) -> Self {
        self.principal_limiter = who
            .subject
            .as_deref()
            .map(|principal| self.server.principal_limiters.of(principal));
        self.principal = who.subject.clone();
        let who = Viewer::new(who.subject, as_set(who.scopes), as_set(who.tags));
        self.identity = RwLock::new(Arc::new(who));
        self
    }

    /// Counted among the live sessions from now (`initialize` succeeded).
    pub(super) fn count_live(&self) {
        *self.counted.lock().unwrap_or_else(|e| e.into_inner()) =
            self.server.metrics.session_opened();
    }

    /// It ended: no longer counted live, and it hears of no more changes.
    fn uncount(&self) {
        self.unwatch();
        self.counted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }

    pub(crate) fn send(&self, frame: String) {
        self.out.send(frame);
    }

    /// Whether the negotiated protocol version takes batches.
    pub(super) fn batches_allowed(&self) -> bool {
        self.negotiated
            .get()
            .is_some_and(|n| n.version.allows_batches())
    }

    /// Where frames tied to a request go: its stream, or this session's channel.
    pub(crate) fn sender_for(&self, stream: Option<&Arc<RequestStream>>) -> OutboundSender {
        match stream {
            Some(stream) => OutboundSender::Stream(stream.clone()),
            None => self.out.clone(),
        }
    }

    pub(super) fn inflight_table(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<RequestId, InflightCall>> {
        self.inflight.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn log_level(&self) -> LogLevel {
        LogLevel::from_index(self.log_level.load(Ordering::Relaxed))
    }

    fn cancel_all(&self) {
        for (_, call) in self.inflight_table().drain() {
            call.cancel.cancel();
        }
    }

    /// Records a tool call in flight; `None` if its id is already in use.
    ///
    /// Each call has a cancellation of its own rather than a child token of a session-wide
    /// one: children share their parent's lock, which every call would contend on. Shutdown
    /// cancels the calls through this table instead.
    pub(crate) fn register_call(&self, id: &RequestId) -> Option<(u64, Arc<CallCancel>)> {
        // One hash of the id per lookup (SipHash: ids are the client's choice), so one lookup.
        let mut table = self.inflight_table();
        let std::collections::hash_map::Entry::Vacant(slot) = table.entry(id.clone()) else {
            return None;
        };
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        let cancel = Arc::new(CallCancel::default());
        slot.insert(InflightCall {
            serial,
            cancel: cancel.clone(),
        });
        Some((serial, cancel))
    }

    /// Forgets a finished call; `false` if it was already gone, i.e. the client or shutdown
    /// cancelled it (its answer must then be suppressed).
    pub(crate) fn finish_call(&self, id: &RequestId, serial: u64) -> bool {
        let mut table = self.inflight_table();
        match table.remove_entry(id) {
            Some((_, call)) if call.serial == serial => true,
            // The id was cancelled and is in use again by a newer call: that one stays.
            Some((id, call)) => {
                table.insert(id, call);
                false
            }
            None => false,
        }
    }

    fn unwatch(&self) {
        if let Some(key) = self.watch_key {
            self.server.watchers.leave(key);
        }
    }

    pub(crate) fn subscriptions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.subscriptions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for SessionShared {
    /// A session dropped without `shutdown` stops hearing of changes too.
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.unwatch();
    }
}
