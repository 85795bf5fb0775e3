//! The live HTTP sessions: ids from the OS CSPRNG, the engine session behind each, its
//! streams, and what counts as idle.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::StatusCode;

use super::events::EventStore;
use super::replies::{Reply, refusal, retry_later};
use super::sse::{Replay, SseStream};
use crate::catalog::visibility::Viewer;
use crate::{Outbound, Server, Session};

/// The standalone GET stream's name in every session.
pub(crate) const STANDALONE: &str = "g";

/// Who holds a session, for the per-client session limit: the token's subject when there is
/// one, else the peer's IP address (the port changes with every connection).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    Subject(Arc<str>),
    Address(IpAddr),
}

impl Client {
    /// An IPv6 peer is its /64: one host is usually given a whole /64 and may use any
    /// address in it.
    pub(crate) fn new(owner: Option<&str>, peer: IpAddr) -> Client {
        match (owner, peer) {
            (Some(subject), _) => Client::Subject(subject.into()),
            (None, IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => Client::Address(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Client::Address(IpAddr::V6(prefix.into()))
                }
            },
            (None, v4) => Client::Address(v4),
        }
    }
}

pub(crate) struct HttpSession {
    pub(crate) id: Arc<str>,
    pub(crate) session: Session,
    /// The token subject that opened the session; only it may use the session.
    pub(crate) owner: Option<String>,
    pub(crate) client: Client,
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
    /// Opens an engine session of `server` for `owner` and its HTTP session, under a new id
    /// or under `taken_over`'s: a session taken over from another replica (it died; the
    /// session's record and events are in a shared store), its streams numbered on from what
    /// the store kept. The error is the refusal to answer: no runtime, or no random source for
    /// a new id (a guessable one is never used).
    ///
    /// What the session sends that is not tied to a request goes to its standalone stream:
    /// pushed there as it is sent when the store keeps events in this process, else (a store
    /// that may block, Redis) through a channel that a task of its own drains on the runtime.
    #[allow(
        clippy::result_large_err,
        reason = "the Err side is the refusal to send, built once on a rare path"
    )]
    pub(crate) fn open(
        server: &Server,
        owner: Option<String>,
        client: Client,
        store: Arc<dyn EventStore>,
        retry: Duration,
        taken_over: Option<&str>,
    ) -> Result<Arc<Self>, Reply> {
        let id: Arc<str> = match taken_over {
            Some(id) => id.into(),
            None => new_session_id()
                .ok_or_else(|| {
                    refusal(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "Internal Server Error: no secure random source for a session id",
                    )
                })?
                .into(),
        };
        let standalone = SseStream::new(
            STANDALONE.into(),
            Some(Replay {
                store: store.clone(),
                session: id.clone(),
            }),
            retry,
        );
        let session = if store.in_process() {
            let sink = standalone.clone();
            Session::authenticated_into(
                server,
                Viewer::new(owner.clone(), Vec::new(), Vec::new()),
                Arc::new(move |frame: String| sink.push(&frame)),
            )
        } else {
            Session::authenticated(server, Viewer::new(owner.clone(), Vec::new(), Vec::new())).map(
                |(session, outbound)| {
                    tokio::spawn(forward_standalone(outbound, standalone.clone()));
                    session
                },
            )
        }
        .map_err(|_| refusal(StatusCode::INTERNAL_SERVER_ERROR, "no runtime"))?;
        let this = Arc::new(HttpSession {
            id,
            session,
            owner,
            client,
            standalone,
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU64::new(1),
            store,
            retry,
            last_active: AtomicU64::new(now_ms()),
            requests: AtomicUsize::new(0),
            listed: AtomicBool::new(false),
        });
        if taken_over.is_some() {
            this.number_on();
        }
        Ok(this)
    }

    /// A session taken over goes on numbering where its old replica's events stopped.
    fn number_on(&self) {
        if let Some(last) = self.store.last_seq(&self.id, STANDALONE) {
            self.standalone.continue_after(last);
        }
        // POST streams are named `p<n>`: the new ones start far from the old replica's.
        let mut base = [0u8; 4];
        if getrandom::fill(&mut base).is_ok() {
            let base = u64::from(u32::from_le_bytes(base)) << 16;
            self.next_stream.store(base.max(1 << 16), Ordering::Relaxed);
        }
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

    /// Marks a request as being handled (until the guard drops); `None` once the session was
    /// claimed for ending (see [`claim_if_idle`](Self::claim_if_idle)): the request then gets
    /// the 404 of a session that is gone, rather than running in one being ended.
    pub(crate) fn begin_request(self: &Arc<Self>) -> Option<RequestGuard> {
        self.requests
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n & CLAIMED == 0).then_some(n + 1)
            })
            .ok()?;
        self.touch();
        Some(RequestGuard {
            session: self.clone(),
        })
    }

    /// Claims an idle session for ending: from here no request can begin on it. Called under
    /// the table's lock, so nothing else claims it meanwhile; false if it is not idle (a
    /// request began since it was chosen, say).
    fn claim_if_idle(&self) -> bool {
        self.is_idle()
            && self
                .requests
                .compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    fn touch(&self) {
        self.last_active.store(now_ms(), Ordering::Relaxed);
    }

    /// Sets when the session was last used (tests of the eviction order).
    #[cfg(test)]
    pub(crate) fn set_last_active(&self, ms: u64) {
        self.last_active.store(ms, Ordering::Relaxed);
    }

    /// Idle for at least `limit`: no request being handled, no call in flight, no stream open.
    pub(crate) fn idle_for(&self, limit: Duration) -> bool {
        let idle_ms = now_ms().saturating_sub(self.last_active.load(Ordering::Relaxed));
        Duration::from_millis(idle_ms) >= limit && self.is_idle()
    }

    /// No request being handled, no call in flight, no stream open. (What the session kept for
    /// a client to come back to, an answer waiting in the event store for a resumption, say,
    /// is lost when it ends; the idle timeout and the session limits accept that.)
    fn is_idle(&self) -> bool {
        self.requests.load(Ordering::Acquire) == 0
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

/// In `requests`: the session was claimed for ending, and takes no more requests.
const CLAIMED: usize = 1 << (usize::BITS - 1);

pub(crate) struct RequestGuard {
    session: Arc<HttpSession>,
}

impl Drop for RequestGuard {
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
    Some(crate::wire::hex(&bytes))
}

/// How many sessions may live, in all and per client.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionLimits {
    pub(crate) max: usize,
    pub(crate) per_client: usize,
}

/// What became of a session offered to the table.
pub(crate) enum Admission {
    /// Listed; to make room, this idle session was taken out (the caller ends it).
    Admitted { evicted: Option<Arc<HttpSession>> },
    /// Its client holds `per_client` sessions already, none of them idle.
    ClientFull,
    /// The table is full, and no session may make room: none idle of a client holding at
    /// least two more sessions than the newcomer's, nor of the newcomer's own client.
    TableFull,
}

impl Admission {
    /// The session taken out to make room (if any), or the reply refusing the newcomer: a 429
    /// when its own client holds its share, a 503 when the table is full.
    #[allow(
        clippy::result_large_err,
        reason = "the Err side is the refusal to send, built once on a rare path"
    )]
    pub(crate) fn into_result(
        self,
        limits: SessionLimits,
    ) -> Result<Option<Arc<HttpSession>>, Reply> {
        match self {
            Admission::Admitted { evicted } => Ok(evicted),
            Admission::ClientFull => Err(retry_later(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "Too Many Requests: this client holds {} live sessions, its limit, and none \
                     is idle; end one (DELETE) or retry later",
                    limits.per_client
                ),
            )),
            Admission::TableFull => Err(retry_later(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: too many live sessions; retry later",
            )),
        }
    }
}

/// The live sessions by id, and how many each client holds.
#[derive(Default)]
pub(crate) struct SessionTable {
    inner: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    sessions: HashMap<Arc<str>, Arc<HttpSession>>,
    held: HashMap<Client, usize>,
}

impl Table {
    fn held(&self, client: &Client) -> usize {
        self.held.get(client).copied().unwrap_or(0)
    }

    fn take(&mut self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.sessions.remove(id)?;
        if let Some(count) = self.held.get_mut(&session.client) {
            *count -= 1;
            if *count == 0 {
                self.held.remove(&session.client);
            }
        }
        Some(unlisted(session))
    }

    /// The idle session to end for a newcomer of `client`, which holds `held` sessions: of the
    /// clients holding the most sessions (more than the newcomer will), or of the newcomer's
    /// own client, the session used least recently. A client never loses a session to one
    /// that holds as many.
    fn victim(&self, client: &Client, held: usize, own_only: bool) -> Option<Arc<str>> {
        // The order is read from plain fields first; whether a session is idle (which locks
        // its streams) is asked of the best candidates only, in order, until one is. Asking
        // each of a client's 1,000 sessions cost 150 µs a new session when clients abandon
        // theirs.
        let mut candidates = Vec::new();
        let mut keys = Vec::new();
        for session in self.sessions.values() {
            let holds = if &session.client == client {
                held
            } else if own_only {
                continue;
            } else {
                let holds = self.held(&session.client);
                if holds <= held + 1 {
                    continue;
                }
                holds
            };
            let last_active = session.last_active.load(Ordering::Relaxed);
            keys.push((holds, std::cmp::Reverse(last_active), candidates.len()));
            candidates.push(session);
        }
        let mut order = std::collections::BinaryHeap::from(keys);
        while let Some((_, _, index)) = order.pop() {
            let session: &Arc<HttpSession> = candidates[index];
            if session.is_idle() {
                return Some(session.id.clone());
            }
        }
        None
    }
}

impl SessionTable {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.table().sessions.get(id).cloned()
    }

    /// Lists `session` within `limits`. A client at its limit makes room by losing its own
    /// least recently used idle session; a full table, by the greediest client's (see
    /// [`Table::victim`]). With no idle session to take, the session is refused.
    pub(crate) fn insert(&self, session: Arc<HttpSession>, limits: SessionLimits) -> Admission {
        let mut table = self.table();
        let held = table.held(&session.client);
        let victim = if held >= limits.per_client {
            match table.victim(&session.client, held, true) {
                Some(id) => Some(id),
                None => return Admission::ClientFull,
            }
        } else if table.sessions.len() >= limits.max {
            match table.victim(&session.client, held, false) {
                Some(id) => Some(id),
                None => return Admission::TableFull,
            }
        } else {
            None
        };
        // Claimed before it is taken: a request that found it a moment ago cannot begin now.
        if let Some(id) = &victim
            && !table.sessions.get(id).is_some_and(|s| s.claim_if_idle())
        {
            return if held >= limits.per_client {
                Admission::ClientFull
            } else {
                Admission::TableFull
            };
        }
        let evicted = victim.and_then(|id| table.take(&id));
        session.listed.store(true, Ordering::Release);
        *table.held.entry(session.client.clone()).or_insert(0) += 1;
        table.sessions.insert(session.id.clone(), session);
        Admission::Admitted { evicted }
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.table().take(id)
    }

    /// Removes and returns the sessions idle for `limit`.
    pub(crate) fn take_idle(&self, limit: Duration) -> Vec<Arc<HttpSession>> {
        let mut table = self.table();
        let idle: Vec<Arc<str>> = table
            .sessions
            .iter()
            .filter(|(_, s)| s.idle_for(limit) && s.claim_if_idle())
            .map(|(id, _)| id.clone())
            .collect();
        idle.iter().filter_map(|id| table.take(id)).collect()
    }

    pub(crate) fn take_all(&self) -> Vec<Arc<HttpSession>> {
        let mut table = self.table();
        table.held.clear();
        table.sessions.drain().map(|(_, s)| unlisted(s)).collect()
    }
}

fn unlisted(session: Arc<HttpSession>) -> Arc<HttpSession> {
    session.listed.store(false, Ordering::Release);
    session
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(address: &str) -> Client {
        Client::new(None, address.parse().expect("an IP address"))
    }

    #[test]
    fn a_client_is_its_subject_else_its_address_and_an_ipv6_peer_its_slash_64() {
        let v4: IpAddr = "10.0.0.1".parse().expect("address");
        assert_eq!(Client::new(Some("ann"), v4), Client::Subject("ann".into()));
        assert_eq!(peer("10.0.0.1"), Client::Address(v4));
        assert_eq!(peer("::ffff:10.0.0.1"), Client::Address(v4), "v4-mapped");
        assert_eq!(peer("2001:db8:1:2:aaaa::1"), peer("2001:db8:1:2:bbbb::9"));
        assert_ne!(peer("2001:db8:1:2::1"), peer("2001:db8:1:3::1"));
    }
}
