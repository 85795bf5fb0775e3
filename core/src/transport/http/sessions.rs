//! The live HTTP sessions: ids from the OS CSPRNG, the engine session behind each, its
//! streams, and what counts as idle.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::events::EventStore;
use super::sse::{Replay, SseStream};
use crate::{Outbound, Session};

/// The standalone GET stream's name in every session.
pub(crate) const STANDALONE: &str = "g";

pub(crate) struct HttpSession {
    pub(crate) id: Arc<str>,
    pub(crate) session: Session,
    /// The token subject that opened the session; only it may use the session.
    pub(crate) owner: Option<String>,
    pub(crate) standalone: Arc<SseStream>,
    streams: Mutex<HashMap<String, Arc<SseStream>>>,
    next_stream: AtomicU64,
    store: Arc<dyn EventStore>,
    retry: Duration,
    /// Milliseconds since `epoch()` at the last request (an atomic: every request touches it).
    last_active: AtomicU64,
    requests: AtomicUsize,
    /// In the table of live sessions: what a connection's remembered session is checked against.
    listed: AtomicBool,
}

impl HttpSession {
    /// A session whose standalone stream is fed from `outbound` (by a task it spawns).
    pub(crate) fn start(
        session: Session,
        outbound: Outbound,
        owner: Option<String>,
        store: Arc<dyn EventStore>,
        retry: Duration,
    ) -> Option<Arc<Self>> {
        let id: Arc<str> = new_session_id()?.into();
        let standalone = SseStream::new(
            STANDALONE.into(),
            Some(Replay {
                store: store.clone(),
                session: id.clone(),
            }),
            retry,
        );
        let this = Arc::new(HttpSession {
            id,
            session,
            owner,
            standalone: standalone.clone(),
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU64::new(1),
            store,
            retry,
            last_active: AtomicU64::new(now_ms()),
            requests: AtomicUsize::new(0),
            listed: AtomicBool::new(false),
        });
        tokio::spawn(forward_standalone(outbound, standalone));
        Some(this)
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<SseStream>>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new resumable stream for the answers to one POST.
    pub(crate) fn open_stream(&self) -> Arc<SseStream> {
        let name = format!("p{}", self.next_stream.fetch_add(1, Ordering::Relaxed));
        let stream = SseStream::new(
            name.clone(),
            Some(Replay {
                store: self.store.clone(),
                session: self.id.clone(),
            }),
            self.retry,
        );
        self.streams().insert(name, stream.clone());
        stream
    }

    /// The stream named `name`, live or (for replay) ended.
    pub(crate) fn stream(&self, name: &str) -> Option<Arc<SseStream>> {
        if name == STANDALONE {
            return Some(self.standalone.clone());
        }
        self.streams().get(name).cloned()
    }

    /// A POST stream is complete; it stays resumable from the store.
    pub(crate) fn close_stream(&self, stream: &SseStream) {
        stream.end();
        self.streams().remove(&stream.name);
    }

    /// Still in the table of live sessions (not deleted, expired or ended).
    pub(crate) fn is_listed(&self) -> bool {
        self.listed.load(Ordering::Acquire)
    }

    /// Marks a request as being handled (until the guard drops).
    pub(crate) fn begin_request(&self) -> RequestGuard<'_> {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.touch();
        RequestGuard { session: self }
    }

    fn touch(&self) {
        self.last_active.store(now_ms(), Ordering::Relaxed);
    }

    /// Idle for at least `limit`: no request being handled, no call in flight, no stream open.
    pub(crate) fn idle_for(&self, limit: Duration) -> bool {
        let idle_ms = now_ms().saturating_sub(self.last_active.load(Ordering::Relaxed));
        Duration::from_millis(idle_ms) >= limit
            && self.requests.load(Ordering::Acquire) == 0
            && self.session.calls_in_flight() == 0
            && !self.standalone.is_attached()
            && !self.streams().values().any(|s| s.is_attached())
    }

    /// Ends the session now (DELETE, idle): calls in flight are cancelled, streams close,
    /// events are forgotten.
    pub(crate) fn terminate(&self) {
        self.session.close();
        for (_, stream) in self.streams().drain() {
            stream.end();
        }
        self.standalone.end();
        self.store.forget_session(&self.id);
    }

    /// Ends the session gracefully: calls in flight drain (the server's `drain_timeout`), streams close,
    /// events are forgotten.
    pub(crate) async fn end(&self) {
        self.session.shutdown().await;
        for (_, stream) in self.streams().drain() {
            stream.end();
        }
        self.standalone.end();
        self.store.forget_session(&self.id);
    }
}

pub(crate) struct RequestGuard<'a> {
    session: &'a HttpSession,
}

impl Drop for RequestGuard<'_> {
    fn drop(&mut self) {
        self.session.touch();
        self.session.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

async fn forward_standalone(mut outbound: Outbound, stream: Arc<SseStream>) {
    while let Some(frame) = outbound.recv().await {
        stream.push(&frame);
    }
    stream.end();
}

/// Milliseconds since this process first asked.
fn now_ms() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// 128 random bits from the OS, as 32 hex digits; `None` if the OS has no randomness to give
/// (then no session is opened rather than one with a guessable id).
fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    if let Err(err) = getrandom::fill(&mut bytes) {
        tracing::error!(%err, "the OS random number generator failed");
        return None;
    }
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The live sessions by id.
#[derive(Default)]
pub(crate) struct SessionTable {
    sessions: Mutex<HashMap<Arc<str>, Arc<HttpSession>>>,
}

impl SessionTable {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<HttpSession>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.table().get(id).cloned()
    }

    /// Adds `session` unless `max` are live already.
    pub(crate) fn insert(&self, session: Arc<HttpSession>, max: usize) -> bool {
        let mut table = self.table();
        if table.len() >= max {
            return false;
        }
        session.listed.store(true, Ordering::Release);
        table.insert(session.id.clone(), session);
        true
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.table().remove(id).map(unlisted)
    }

    pub(crate) fn len(&self) -> usize {
        self.table().len()
    }

    /// Removes and returns the sessions idle for `limit`.
    pub(crate) fn take_idle(&self, limit: Duration) -> Vec<Arc<HttpSession>> {
        let mut table = self.table();
        let idle: Vec<Arc<str>> = table
            .iter()
            .filter(|(_, s)| s.idle_for(limit))
            .map(|(id, _)| id.clone())
            .collect();
        idle.iter()
            .filter_map(|id| table.remove(id))
            .map(unlisted)
            .collect()
    }

    pub(crate) fn take_all(&self) -> Vec<Arc<HttpSession>> {
        self.table().drain().map(|(_, s)| unlisted(s)).collect()
    }
}

fn unlisted(session: Arc<HttpSession>) -> Arc<HttpSession> {
    session.listed.store(false, Ordering::Release);
    session
}
