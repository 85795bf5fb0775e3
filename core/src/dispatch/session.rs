//! One client connection's state and the router for its messages.
//!
//! A transport feeds frames in with [`Session::handle_frame`] and takes frames out of the
//! paired [`Outbound`]. That pair is also the "bring your own transport" entry point.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};
use tokio::runtime::Handle;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::peer::PeerRequests;
use super::responder::{
    BatchCollector, Notify, OutboundSender, ReplyTarget, RequestStream, Responder,
};
use super::server::ServerInner;
use super::{Server, call};
use crate::Error;
use crate::context::CallCancel;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion};
use crate::wire::{
    ErrorObject, Frame, Inbound, RequestId, error_frame, notification_frame, parse_frame,
};

/// What `initialize` settled.
pub(crate) struct Negotiated {
    pub(crate) version: ProtocolVersion,
    pub(crate) client_info: Implementation,
    pub(crate) client_capabilities: Value,
}

struct InflightCall {
    serial: u64,
    cancel: Arc<CallCancel>,
}

pub(crate) struct SessionShared {
    pub(crate) server: Arc<ServerInner>,
    out: OutboundSender,
    pub(crate) negotiated: OnceLock<Negotiated>,
    initialized: AtomicBool,
    log_level: AtomicU8,
    inflight: Mutex<HashMap<RequestId, InflightCall>>,
    next_serial: AtomicU64,
    pub(crate) peer: PeerRequests,
    pub(crate) tasks: TaskTracker,
    pub(crate) shutdown: CancellationToken,
    pub(crate) runtime: Handle,
    pub(crate) spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
    /// Resource URIs this client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
}

/// A tool call that did not finish when first polled, handed to [`HostHooks::spawn_call`].
pub type CallTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// How a host that runs its own event loop takes part in a session ([`Session::hosted`]).
///
/// The host feeds frames with [`Session::handle_frame`] on its loop's thread; a call is first
/// polled right there, so a handler that answers at once runs on that thread too.
pub struct HostHooks {
    /// Runs after every outbound frame is queued, on whatever thread queued it: the host
    /// schedules a drain of [`Outbound::try_recv`] on its loop. It must be quick.
    pub notify: Box<dyn Fn() + Send + Sync>,
    /// Takes each call that did not finish at its first poll; the host polls it to completion
    /// (on its loop, waking on the task's waker). `None`: it runs as a task on the runtime.
    pub spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
}

/// One client's session. Cheap to clone; clones refer to the same session.
#[derive(Clone)]
pub struct Session {
    shared: Arc<SessionShared>,
}

/// The session's outbound frames, in order: compact single-line JSON texts to write to the
/// client. Ends (`None`) once the session has shut down and everything was taken.
pub struct Outbound {
    rx: UnboundedReceiver<String>,
    shutdown: CancellationToken,
}

impl Outbound {
    /// The next frame; `None` after shutdown, once drained.
    pub async fn recv(&mut self) -> Option<String> {
        tokio::select! {
            biased;
            frame = self.rx.recv() => frame,
            () = self.shutdown.cancelled() => self.rx.try_recv().ok(),
        }
    }

    /// The next frame if one is ready now.
    pub fn try_recv(&mut self) -> Option<String> {
        self.rx.try_recv().ok()
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A new session on the current tokio runtime, for a transport of your own.
    pub fn session(&self) -> Result<(Session, Outbound), Error> {
        Ok(Session::with_runtime(self, current_runtime()?))
    }
}

impl Session {
    /// A new session whose calls run on `runtime`.
    pub fn with_runtime(server: &Server, runtime: Handle) -> (Session, Outbound) {
        Self::build(server, runtime, None)
    }

    /// A session for one exchange that stands alone (stateless HTTP), on the current runtime.
    /// Whatever it sends that is not tied to the exchange's request has nowhere to go, so it
    /// has no channel of its own and watches nothing: each request is spared a channel, a
    /// watcher task and three subscriptions to channels that every session shares.
    pub(crate) fn for_one_exchange(server: &Server) -> Result<Session, Error> {
        let shared = SessionShared::new(server, current_runtime()?, OutboundSender::Nowhere, None);
        Ok(Session {
            shared: Arc::new(shared),
        })
    }

    /// A session driven from a host's own event loop (a JS engine's, a UI thread's): see
    /// [`HostHooks`].
    pub fn hosted(server: &Server, runtime: Handle, hooks: HostHooks) -> (Session, Outbound) {
        Self::build(server, runtime, Some(hooks))
    }

    fn build(server: &Server, runtime: Handle, hooks: Option<HostHooks>) -> (Session, Outbound) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (notify, spawn_call) = match hooks {
            Some(hooks) => (Some(Notify::from(hooks.notify)), hooks.spawn_call),
            None => (None, None),
        };
        let out = OutboundSender::new(tx, notify);
        let shared = Arc::new(SessionShared::new(server, runtime, out, spawn_call));
        let shutdown = shared.shutdown.clone();
        let catalog = &shared.server.catalog;
        shared.runtime.spawn(watch_changes(
            Arc::downgrade(&shared),
            Watched {
                tools: {
                    let mut rx = shared.server.registry.subscribe();
                    rx.borrow_and_update();
                    rx
                },
                catalog: {
                    let mut rx = catalog.subscribe_changes();
                    rx.borrow_and_update();
                    rx
                },
                updates: catalog.subscribe_updates(),
            },
            shutdown.clone(),
            server.inner.options.list_changed_debounce,
        ));
        (Session { shared }, Outbound { rx, shutdown })
    }

    /// Processes one inbound frame (one JSON text, without the line terminator).
    ///
    /// Never blocks: tool calls are spawned, everything else is answered at once.
    pub fn handle_frame(&self, frame: &[u8]) {
        let shared = &self.shared;
        shared.dispatch_frame(parse_frame(frame, &shared.server.limits), &shared.out);
    }

    /// Processes one parsed frame whose answers and related frames go to `stream` (or, without
    /// one, to the session's outbound channel).
    pub(crate) fn handle_parsed(&self, frame: Frame, stream: Option<Arc<RequestStream>>) {
        match stream {
            Some(stream) => self
                .shared
                .dispatch_frame(frame, &OutboundSender::Stream(stream)),
            None => self.shared.dispatch_frame(frame, &self.shared.out),
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
        });
        self.shared.initialized.store(true, Ordering::Release);
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
    }

    /// Ends the session at once: every call is cancelled and nothing more is sent.
    pub fn close(&self) {
        self.shared.tasks.close();
        self.shared.cancel_all();
        self.shared.peer.close_all();
        self.shared.shutdown.cancel();
    }
}

fn current_runtime() -> Result<Handle, Error> {
    Handle::try_current().map_err(|e| Error::NoRuntime(e.to_string()))
}

impl SessionShared {
    fn new(
        server: &Server,
        runtime: Handle,
        out: OutboundSender,
        spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
    ) -> Self {
        SessionShared {
            server: server.inner.clone(),
            out,
            negotiated: OnceLock::new(),
            initialized: AtomicBool::new(false),
            log_level: AtomicU8::new(server.inner.options.default_log_level.index()),
            inflight: Mutex::new(HashMap::new()),
            next_serial: AtomicU64::new(0),
            peer: PeerRequests::default(),
            tasks: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            runtime,
            spawn_call,
            subscriptions: Mutex::new(HashSet::new()),
        }
    }
}

impl Drop for SessionShared {
    /// A session dropped without `shutdown` still stops its background watcher.
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

struct Watched {
    tools: tokio::sync::watch::Receiver<u64>,
    catalog: tokio::sync::watch::Receiver<[u64; 2]>,
    updates: tokio::sync::broadcast::Receiver<Arc<str>>,
}

/// Sends one coalesced `list_changed` per burst of changes to each list, once initialized, and
/// `notifications/resources/updated` for subscribed URIs.
async fn watch_changes(
    session: std::sync::Weak<SessionShared>,
    mut watched: Watched,
    shutdown: CancellationToken,
    debounce: std::time::Duration,
) {
    let mut seen_catalog = *watched.catalog.borrow();
    loop {
        let mut tools_changed = false;
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = watched.tools.changed() => {
                if changed.is_err() { return }
                tools_changed = true;
            }
            changed = watched.catalog.changed() => if changed.is_err() { return },
            update = watched.updates.recv() => {
                let uri = match update {
                    Ok(uri) => uri,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "resource updates came faster than this session took them");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(session) = session.upgrade() else { return };
                if session.subscriptions().contains(&*uri) {
                    session.send(notification_frame(
                        "notifications/resources/updated",
                        Some(&json!({"uri": &*uri})),
                    ));
                }
                continue;
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(debounce) => {}
        }
        if watched.tools.has_changed().unwrap_or(false) {
            tools_changed = true;
        }
        watched.tools.borrow_and_update();
        let catalog = *watched.catalog.borrow_and_update();
        let Some(session) = session.upgrade() else {
            return;
        };
        if !session.initialized.load(Ordering::Acquire) {
            seen_catalog = catalog;
            continue;
        }
        let notify = |method: &str| session.send(notification_frame::<Value>(method, None));
        if tools_changed {
            notify("notifications/tools/list_changed");
        }
        if catalog[0] != seen_catalog[0] {
            notify("notifications/resources/list_changed");
        }
        if catalog[1] != seen_catalog[1] {
            notify("notifications/prompts/list_changed");
        }
        seen_catalog = catalog;
    }
}

/// Appends one page of a list sorted by key to `json`, as the JSON text of
/// `{"<key>": [...], "nextCursor"?}`; `render` appends one item's JSON. A bad cursor is refused
/// before anything is written.
pub(crate) fn write_page<V>(
    json: &mut String,
    items: &BTreeMap<String, V>,
    params: Option<&Value>,
    page_size: Option<usize>,
    list_key: &str,
    render: impl Fn(&V, &mut String),
) -> Result<(), ErrorObject> {
    let after = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(
            decode_cursor(cursor)
                .ok_or_else(|| ErrorObject::invalid_params("Invalid params: invalid cursor"))?,
        ),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: \"cursor\" must be a string",
            ));
        }
    };
    let lower = match &after {
        Some(after) => Bound::Excluded(after.as_str()),
        None => Bound::Unbounded,
    };
    let mut page = items.range::<str, _>((lower, Bound::Unbounded));
    json.push_str("{\"");
    json.push_str(list_key);
    json.push_str("\":[");
    let mut last = None;
    for (index, (key, item)) in page
        .by_ref()
        .take(page_size.unwrap_or(usize::MAX))
        .enumerate()
    {
        if index > 0 {
            json.push(',');
        }
        render(item, json);
        last = Some(key.as_str());
    }
    json.push(']');
    if let Some(last) = last
        && page.next().is_some()
    {
        json.push_str(r#","nextCursor":"#);
        json.push_str(&Value::from(encode_cursor(last)).to_string());
    }
    json.push('}');
    Ok(())
}

const CURSOR_PREFIX: &str = "tw1.";

fn encode_cursor(after: &str) -> String {
    let mut cursor = String::with_capacity(CURSOR_PREFIX.len() + after.len() * 2);
    cursor.push_str(CURSOR_PREFIX);
    for byte in after.bytes() {
        cursor.push_str(&format!("{byte:02x}"));
    }
    cursor
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix(CURSOR_PREFIX)?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

impl SessionShared {
    pub(crate) fn send(&self, frame: String) {
        self.out.send(frame);
    }

    /// Whether the negotiated protocol version takes batches.
    fn batches_allowed(&self) -> bool {
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

    fn inflight_table(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, InflightCall>> {
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
        let mut table = self.inflight_table();
        if table.contains_key(id) {
            return None;
        }
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        let cancel = Arc::new(CallCancel::default());
        table.insert(
            id.clone(),
            InflightCall {
                serial,
                cancel: cancel.clone(),
            },
        );
        Some((serial, cancel))
    }

    /// Forgets a finished call; `false` if it was already gone, i.e. the client or shutdown
    /// cancelled it (its answer must then be suppressed).
    pub(crate) fn finish_call(&self, id: &RequestId, serial: u64) -> bool {
        let mut table = self.inflight_table();
        if table.get(id).is_some_and(|call| call.serial == serial) {
            table.remove(id);
            true
        } else {
            false
        }
    }

    fn dispatch_frame(self: &Arc<Self>, frame: Frame, out: &OutboundSender) {
        match frame {
            Frame::Single(Ok(message)) => self.dispatch(message, ReplyTarget::Direct, out),
            Frame::Single(Err(rejection)) => {
                if rejection.reply {
                    out.answer(Some(error_frame(rejection.id.as_ref(), &rejection.error)));
                } else {
                    tracing::debug!(reason = %rejection.error.message, "dropped an unanswerable message");
                }
            }
            Frame::Batch(items) => self.dispatch_batch(items, out),
        }
    }

    fn dispatch(self: &Arc<Self>, message: Inbound, target: ReplyTarget, out: &OutboundSender) {
        match message {
            Inbound::Request { id, method, params } => {
                let responder = Responder::new(out.clone(), id, target);
                self.handle_request(responder, &method, params);
            }
            Inbound::Notification { method, params } => self.handle_notification(&method, params),
            Inbound::Result { id, result } => {
                if !self.peer.resolve(&id, Ok(result)) {
                    tracing::debug!(%id, "ignored a response to no request of ours");
                }
            }
            Inbound::Error {
                id: Some(id),
                error,
            } => {
                if !self.peer.resolve(&id, Err(error)) {
                    tracing::debug!(%id, "ignored an error response to no request of ours");
                }
            }
            Inbound::Error { id: None, error } => {
                tracing::warn!(code = %error.code, message = %error.message, "the client reported an error");
            }
        }
    }

    fn dispatch_batch(
        self: &Arc<Self>,
        items: Vec<Result<Inbound, crate::wire::Rejection>>,
        out: &OutboundSender,
    ) {
        let version = self.negotiated.get().map(|n| n.version);
        if !self.batches_allowed() {
            let why = match version {
                Some(version) => format!(
                    "Invalid request: batches are not supported in protocol version {version}"
                ),
                None => "Invalid request: a batch cannot carry initialize; send it alone".into(),
            };
            out.answer(Some(error_frame(None, &ErrorObject::invalid_request(why))));
            return;
        }
        let answers = items
            .iter()
            .filter(|item| match item {
                Ok(Inbound::Request { .. }) => true,
                Ok(_) => false,
                Err(rejection) => rejection.reply,
            })
            .count();
        let collector = BatchCollector::new(out.clone(), answers.max(1));
        for item in items {
            match item {
                Ok(Inbound::Request { id, method, .. }) if method == "initialize" => {
                    Responder::new(out.clone(), id, ReplyTarget::Batch(collector.clone())).error(
                        ErrorObject::invalid_request(
                            "Invalid request: initialize must not be part of a batch",
                        ),
                    );
                }
                Ok(message) => {
                    self.dispatch(message, ReplyTarget::Batch(collector.clone()), out);
                }
                Err(rejection) if rejection.reply => {
                    collector.complete(Some(error_frame(rejection.id.as_ref(), &rejection.error)));
                }
                Err(_) => {}
            }
        }
    }

    fn handle_request(self: &Arc<Self>, responder: Responder, method: &str, params: Option<Value>) {
        // tools/call checks its id atomically when it registers; other requests check here.
        if method != "tools/call" && self.inflight_table().contains_key(responder.id()) {
            let message = format!(
                "Invalid request: id {} is already used by a request in flight",
                responder.id()
            );
            return responder.error(ErrorObject::invalid_request(message));
        }
        match method {
            "initialize" => return self.initialize(responder, params),
            "ping" => return responder.result(&json!({})),
            _ => {}
        }
        // Tools first: a call must not pay for scanning the catalog's method names.
        let catalog = match method {
            "tools/list" | "tools/call" | "logging/setLevel" => false,
            _ if super::catalog::METHODS.contains(&method) => true,
            _ => return responder.error(ErrorObject::method_not_found(method)),
        };
        let Some(negotiated) = self.negotiated.get() else {
            return responder.error(ErrorObject::invalid_request(
                "Invalid request: the session is not initialized; send initialize first",
            ));
        };
        if catalog {
            return super::catalog::handle(self, responder, method, params, negotiated.version);
        }
        match method {
            "tools/list" => self.list_tools(responder, params, negotiated.version),
            "tools/call" => call::start(self, responder, params, negotiated.version),
            _ => self.set_log_level(responder, params),
        }
    }

    fn initialize(&self, responder: Responder, params: Option<Value>) {
        if self.negotiated.get().is_some() {
            return responder.error(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized",
            ));
        }
        let mut params = match params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let Some(Value::String(requested)) = params.get("protocolVersion") else {
            return responder.error(ErrorObject::invalid_params(
                "Invalid params: initialize needs \"protocolVersion\" (a string)",
            ));
        };
        let version = ProtocolVersion::parse(requested).unwrap_or(ProtocolVersion::LATEST);
        let client_capabilities = match params.remove("capabilities") {
            None | Some(Value::Null) => json!({}),
            Some(caps @ Value::Object(_)) => caps,
            Some(_) => {
                return responder.error(ErrorObject::invalid_params(
                    "Invalid params: \"capabilities\" must be an object",
                ));
            }
        };
        let client_info = params
            .remove("clientInfo")
            .and_then(|info| serde_json::from_value::<Implementation>(info).ok())
            .unwrap_or_else(|| {
                tracing::warn!("initialize without a valid clientInfo; continuing");
                Implementation::new("unknown", "unknown")
            });
        tracing::debug!(client = %client_info.name, %version, "initialize");
        let negotiated = Negotiated {
            version,
            client_info,
            client_capabilities,
        };
        if self.negotiated.set(negotiated).is_err() {
            return responder.error(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized",
            ));
        }
        responder.result(&self.server.initialize_result(version));
    }

    fn list_tools(&self, responder: Responder, params: Option<Value>, version: ProtocolVersion) {
        // Each entry is serialised once per version; a page is their concatenation, copied
        // once, straight into the answer's frame. The frame is sized for the first page's
        // entries: exact for a list without a cursor, a hint for a later page.
        let tools = self.server.registry.snapshot();
        let page_size = self.server.options.page_size;
        let listed_len: usize = tools
            .values()
            .take(page_size.unwrap_or(usize::MAX))
            .map(|tool| tool.listing(version).len() + 1)
            .sum();
        responder.result_written(listed_len + 64, |json| {
            write_page(
                json,
                &tools,
                params.as_ref(),
                page_size,
                "tools",
                |tool, json| json.push_str(tool.listing(version)),
            )
        });
    }

    pub(crate) fn subscriptions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.subscriptions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_log_level(&self, responder: Responder, params: Option<Value>) {
        let level = params
            .as_ref()
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse);
        match level {
            Some(level) => {
                self.log_level.store(level.index(), Ordering::Relaxed);
                responder.result(&json!({}));
            }
            None => responder.error(ErrorObject::invalid_params(
                "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, alert, emergency",
            )),
        }
    }

    fn handle_notification(&self, method: &str, params: Option<Value>) {
        let param = |key: &str| params.as_ref().and_then(|p| p.get(key));
        match method {
            "notifications/initialized" => {
                if self.negotiated.get().is_some() {
                    self.initialized.store(true, Ordering::Release);
                }
            }
            "notifications/cancelled" => {
                let Some(id) = param("requestId").and_then(RequestId::from_json) else {
                    return;
                };
                let call = self.inflight_table().remove(&id);
                match call {
                    Some(call) => {
                        tracing::debug!(%id, reason = ?param("reason"), "call cancelled by the client");
                        call.cancel.cancel();
                    }
                    None => tracing::debug!(%id, "ignored a cancel for no call in flight"),
                }
            }
            "notifications/progress" => {
                if let Some(token) = param("progressToken") {
                    self.peer.touch(token);
                }
            }
            other => tracing::debug!(method = other, "ignored a notification"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        for name in ["a", "admin.tools.list", "ünï"] {
            assert_eq!(decode_cursor(&encode_cursor(name)).as_deref(), Some(name));
        }
        assert_eq!(decode_cursor("garbage"), None);
        assert_eq!(decode_cursor("tw1.f"), None);
        assert_eq!(decode_cursor("tw1.zz"), None);
    }
}
