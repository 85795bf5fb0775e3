//! Where SSE events are kept for replay after `Last-Event-ID`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Keeps the events of SSE streams so a client can resume one after a dropped connection.
///
/// Event ids on the wire are `<stream>-<seq>`; streams are named per session, so a store keys
/// by (session, stream). Implement this to share events between server processes.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps event `seq` (1, 2, …) of `stream` in `session`, whose data is `message`.
    fn store(&self, session: &str, stream: &str, seq: u64, message: &str);
    /// The events of `stream` after `after`, in order; `None` if the stream is unknown or some
    /// of those events are gone (the client must then start over).
    fn replay(&self, session: &str, stream: &str, after: u64) -> Option<Vec<(u64, String)>>;
    /// `stream` has sent its last event; its events may be dropped later.
    fn stream_ended(&self, session: &str, stream: &str);
    /// `session` ended: all its events can go (and its record, if kept).
    fn forget_session(&self, session: &str);

    /// A store shared by replicas keeps `record` (what re-opens the session: its owner and
    /// its `initialize` request), so another replica can take the session over when its own
    /// is gone. A store of one process has no use for it.
    fn remember_session(&self, _session: &str, _record: &str) {}
    /// The record kept by [`remember_session`](Self::remember_session), if any.
    fn recall_session(&self, _session: &str) -> Option<String> {
        None
    }
    /// The last event kept of `stream` (a session taken over numbers its new events after it).
    fn last_seq(&self, _session: &str, _stream: &str) -> Option<u64> {
        None
    }
}

/// The default [`EventStore`]: in this process's memory, bounded per stream and per session.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events_per_stream: usize,
    max_ended_streams: usize,
    sessions: Mutex<HashMap<String, SessionLog>>,
}

#[derive(Debug, Default)]
struct SessionLog {
    streams: HashMap<String, StreamLog>,
    ended: VecDeque<String>,
}

#[derive(Debug, Default)]
struct StreamLog {
    events: VecDeque<(u64, String)>,
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        MemoryEventStore::new(1024, 64)
    }
}

impl MemoryEventStore {
    /// A store keeping the last `max_events_per_stream` events of each stream, and the events
    /// of the last `max_ended_streams` finished streams of each session.
    pub fn new(max_events_per_stream: usize, max_ended_streams: usize) -> Self {
        MemoryEventStore {
            max_events_per_stream: max_events_per_stream.max(1),
            max_ended_streams,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionLog>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl EventStore for MemoryEventStore {
    fn store(&self, session: &str, stream: &str, seq: u64, message: &str) {
        let mut sessions = self.sessions();
        let log = sessions.entry(session.to_owned()).or_default();
        let stream = log.streams.entry(stream.to_owned()).or_default();
        if stream.events.len() == self.max_events_per_stream {
            stream.events.pop_front();
        }
        stream.events.push_back((seq, message.to_owned()));
    }

    fn replay(&self, session: &str, stream: &str, after: u64) -> Option<Vec<(u64, String)>> {
        let sessions = self.sessions();
        let events = &sessions.get(session)?.streams.get(stream)?.events;
        if let Some((first, _)) = events.front()
            // A gap: events after `after` are gone (`after` comes from the client; no `+ 1`
            // that u64::MAX would overflow).
            && first.saturating_sub(1) > after
        {
            return None;
        }
        Some(
            events
                .iter()
                .filter(|(seq, _)| *seq > after)
                .cloned()
                .collect(),
        )
    }

    fn stream_ended(&self, session: &str, stream: &str) {
        let mut sessions = self.sessions();
        let Some(log) = sessions.get_mut(session) else {
            return;
        };
        log.ended.push_back(stream.to_owned());
        while log.ended.len() > self.max_ended_streams {
            if let Some(oldest) = log.ended.pop_front() {
                log.streams.remove(&oldest);
            }
        }
    }

    fn forget_session(&self, session: &str) {
        self.sessions().remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_after_an_id_and_reports_gaps() {
        let store = MemoryEventStore::new(3, 1);
        for seq in 1..=4 {
            store.store("s", "p1", seq, &format!("m{seq}"));
        }
        assert_eq!(
            store.replay("s", "p1", 2).unwrap(),
            vec![(3, "m3".into()), (4, "m4".into())]
        );
        assert_eq!(store.replay("s", "p1", 4).unwrap(), vec![]);
        // The largest id a client can send: nothing after it, and no overflow.
        assert_eq!(store.replay("s", "p1", u64::MAX).unwrap(), vec![]);
        assert!(store.replay("s", "p1", 0).is_none(), "event 1 was dropped");
        assert!(store.replay("s", "p2", 0).is_none());
        assert!(store.replay("other", "p1", 0).is_none());
        store.store("s", "p2", 1, "x");
        store.stream_ended("s", "p1");
        store.stream_ended("s", "p2");
        assert!(
            store.replay("s", "p1", 3).is_none(),
            "oldest ended stream evicted"
        );
        assert!(store.replay("s", "p2", 0).is_some());
        store.forget_session("s");
        assert!(store.replay("s", "p2", 0).is_none());
    }
}
