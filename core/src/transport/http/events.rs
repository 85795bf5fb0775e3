//! Where SSE events are kept for replay after `Last-Event-ID`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

pub use crate::events::EventStore;

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
    fn in_process(&self) -> bool {
        true
    }

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
