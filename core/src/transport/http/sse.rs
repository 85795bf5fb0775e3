//! One SSE stream of a session: numbered events, kept for replay, written to whichever HTTP
//! connection currently carries the stream (none, after a drop, until the client resumes).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc::{self, UnboundedSender};

use super::body::SseBody;
use super::events::EventStore;

/// One HTTP connection's end of an SSE stream: what is sent to it waits in memory until the
/// connection takes it, so a reader that falls `limit` bytes behind is let go (its stream goes
/// on and can be resumed with `Last-Event-ID`) rather than held in memory without bound.
pub(crate) struct Outlet {
    tx: UnboundedSender<Bytes>,
    queued: Arc<AtomicUsize>,
    limit: usize,
}

impl Outlet {
    /// A connection's outlet and the response body that drains it.
    pub(crate) fn open(limit: usize, keep_alive: Option<Duration>) -> (Outlet, SseBody) {
        let (tx, chunks) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let body = SseBody::new(chunks, keep_alive).counting_bytes(queued.clone());
        (Outlet { tx, queued, limit }, body)
    }

    /// Sends `chunk`; false when the connection is gone or its reader is more than `limit`
    /// bytes behind. What waits is so at most `limit` plus one event: an event larger than the
    /// limit (a big result) still goes to a reader that is not already that far behind.
    pub(crate) fn send(&self, chunk: Bytes) -> bool {
        if self.queued.load(Ordering::Acquire) > self.limit {
            return false;
        }
        self.queued.fetch_add(chunk.len(), Ordering::AcqRel);
        self.tx.send(chunk).is_ok()
    }

    /// Sends a replayed event: a replay is bounded by the event store, not by the outlet.
    pub(crate) fn send_replayed(&self, chunk: Bytes) {
        self.send_anyway(chunk);
    }

    /// Sends `chunk` whatever is queued (a replay, or the few bytes of a `retry:` hint before
    /// letting go).
    fn send_anyway(&self, chunk: Bytes) {
        self.queued.fetch_add(chunk.len(), Ordering::AcqRel);
        let _ = self.tx.send(chunk);
    }

    fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Where a stream's events are kept; `None` for streams that cannot be resumed.
pub(crate) struct Replay {
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) session: Arc<str>,
}

pub(crate) struct SseStream {
    pub(crate) name: String,
    replay: Option<Replay>,
    retry: Duration,
    state: Mutex<StreamState>,
}

struct StreamState {
    next_seq: u64,
    connection: Option<Outlet>,
    ended: bool,
}

/// The stream cannot be resumed from that event (it is unknown, or events are gone).
#[derive(Debug)]
pub(crate) struct Gone;

impl SseStream {
    pub(crate) fn new(name: String, replay: Option<Replay>, retry: Duration) -> Arc<Self> {
        Arc::new(SseStream {
            name,
            replay,
            retry,
            state: Mutex::new(StreamState {
                next_seq: 1,
                connection: None,
                ended: false,
            }),
        })
    }

    /// Numbers the next event after `seq` (a session taken over from another replica goes on
    /// where that replica's events stopped).
    pub(crate) fn continue_after(&self, seq: u64) {
        self.state().next_seq = seq.saturating_add(1);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `connection` carry the stream from now on (a previous one is let go). With
    /// `priming`, a first event with an id and no data lets the client resume from the start.
    pub(crate) fn attach(&self, connection: Outlet, priming: bool) {
        let mut state = self.state();
        if priming && self.replay.is_some() {
            connection.send(Bytes::from(format!("id: {}-0\ndata: \n\n", self.name)));
        }
        if state.ended {
            return; // dropping the sender ends the body
        }
        state.connection = Some(connection);
    }

    /// Replays the events after `after` into `connection`, then attaches it (if the stream
    /// still runs; an ended stream's body ends after the replay).
    pub(crate) fn resume(&self, connection: Outlet, after: u64) -> Result<(), Gone> {
        let replay = self.replay.as_ref().ok_or(Gone)?;
        let mut state = self.state();
        let events = match replay.store.replay(&replay.session, &self.name, after) {
            Some(events) => events,
            // Nothing was sent after `after` (e.g. only the priming event): nothing to replay.
            // (`after` comes from the client: u64::MAX must not overflow.)
            None if after.checked_add(1) == Some(state.next_seq) => Vec::new(),
            None => return Err(Gone),
        };
        for (seq, message) in events {
            connection.send_replayed(self.event(seq, &message));
        }
        if !state.ended {
            state.connection = Some(connection);
        }
        Ok(())
    }

    /// Whether a connection carries the stream now.
    pub(crate) fn is_attached(&self) -> bool {
        self.state()
            .connection
            .as_ref()
            .is_some_and(|c| !c.is_closed())
    }

    /// Sends (and keeps) one message.
    pub(crate) fn push(&self, message: &str) {
        let mut state = self.state();
        if state.ended {
            return;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        if let Some(replay) = &self.replay {
            replay
                .store
                .store(&replay.session, &self.name, seq, message);
        }
        if let Some(connection) = &state.connection
            && !connection.send(self.event(seq, message))
        {
            if !connection.is_closed() {
                // A slow reader: let it go, with the hint to come back (the event is kept for
                // that when the stream is resumable; an unresumable stream just ends).
                tracing::debug!(
                    stream = %self.name,
                    limit = connection.limit,
                    "ended an SSE connection whose reader fell behind"
                );
                if self.replay.is_some() {
                    connection.send_anyway(self.retry_line());
                }
            }
            state.connection = None;
        }
    }

    /// Closes the current connection after a `retry:` hint; the stream goes on, and the
    /// client resumes it with `Last-Event-ID` (SSE polling). Not for unresumable streams.
    pub(crate) fn release_connection(&self) {
        if self.replay.is_none() {
            return;
        }
        let mut state = self.state();
        if let Some(connection) = state.connection.take() {
            connection.send_anyway(self.retry_line());
        }
    }

    /// The stream is complete: its connection's body ends.
    pub(crate) fn end(&self) {
        let mut state = self.state();
        if state.ended {
            return;
        }
        state.ended = true;
        state.connection = None;
        if let Some(replay) = &self.replay {
            replay.store.stream_ended(&replay.session, &self.name);
        }
    }

    fn event(&self, seq: u64, message: &str) -> Bytes {
        event(&self.name, self.replay.is_some().then_some(seq), message)
    }

    fn retry_line(&self) -> Bytes {
        Bytes::from(format!("retry: {}\n\n", self.retry.as_millis()))
    }
}

/// One SSE `message` event; with `seq`, it has the id `<stream>-<seq>`.
pub(crate) fn event(stream: &str, seq: Option<u64>, message: &str) -> Bytes {
    // Frames are compact JSON: one line, so one `data:` field.
    let mut event = String::with_capacity(message.len() + stream.len() + 40);
    event.push_str("event: message\n");
    if let Some(seq) = seq {
        event.push_str("id: ");
        event.push_str(stream);
        event.push('-');
        event.push_str(&seq.to_string());
        event.push('\n');
    }
    event.push_str("data: ");
    event.push_str(message);
    event.push_str("\n\n");
    Bytes::from(event)
}

/// `<stream>-<seq>` → (stream, seq).
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.trim().rsplit_once('-')?;
    if stream.is_empty() {
        return None;
    }
    Some((stream, seq.parse().ok()?))
}
