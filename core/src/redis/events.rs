//! Legacy (2025) Streamable HTTP sessions' SSE events and records in Redis, so a client whose
//! replica died resumes its session, and its streams after `Last-Event-ID`, on another.
//!
//! Keys (under the prefix): `events:<session>:<stream>` a Redis stream of the events (field
//! `s` the sequence number, `m` the message), trimmed to the newest
//! [`RedisOptions::max_events_per_stream`](super::RedisOptions); `streams-of:<session>` the
//! set of those keys; `session:<session>` the session's record. Everything expires after
//! [`RedisOptions::session_ttl`](super::RedisOptions) without a new event.

use std::sync::Arc;

use super::Shared;
use crate::events::EventStore;

/// An [`EventStore`] shared by every replica connected to one Redis (see
/// [`Redis`](super::Redis)).
pub struct RedisEventStore {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore").finish_non_exhaustive()
    }
}

impl RedisEventStore {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        RedisEventStore { shared }
    }

    fn stream_key(&self, session: &str, stream: &str) -> String {
        self.shared.key(&["events", session, stream])
    }

    fn ttl_secs(&self) -> u64 {
        self.shared.options.session_ttl.as_secs().max(1)
    }

    /// The events kept of `stream`, oldest first (`newest_only`: only the last one).
    fn events(&self, session: &str, stream: &str, newest_only: bool) -> Option<Vec<(u64, String)>> {
        let key = self.stream_key(session, stream);
        let entries: Vec<(String, Vec<(String, String)>)> = self
            .shared
            .command(|con| {
                if newest_only {
                    redis::cmd("XREVRANGE")
                        .arg(&key)
                        .arg("+")
                        .arg("-")
                        .arg("COUNT")
                        .arg(1)
                        .query(con)
                } else {
                    redis::cmd("XRANGE").arg(&key).arg("-").arg("+").query(con)
                }
            })
            .inspect_err(|err| tracing::warn!(%err, "cannot read SSE events from Redis"))
            .ok()?;
        Some(
            entries
                .into_iter()
                .filter_map(|(_, fields)| {
                    let field = |name: &str| {
                        fields
                            .iter()
                            .find(|(key, _)| key == name)
                            .map(|(_, value)| value.clone())
                    };
                    Some((field("s")?.parse().ok()?, field("m")?))
                })
                .collect(),
        )
    }
}

impl EventStore for RedisEventStore {
    fn store(&self, session: &str, stream: &str, seq: u64, message: &str) {
        let key = self.stream_key(session, stream);
        let streams = self.shared.key(&["streams-of", session]);
        let record = self.shared.key(&["session", session]);
        let (max, ttl) = (self.shared.options.max_events_per_stream, self.ttl_secs());
        let stored = self.shared.command(|con| {
            redis::pipe()
                .cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg(max.max(1))
                .arg("*")
                .arg("s")
                .arg(seq)
                .arg("m")
                .arg(message)
                .ignore()
                .expire(&key, ttl as i64)
                .ignore()
                .sadd(&streams, &key)
                .ignore()
                .expire(&streams, ttl as i64)
                .ignore()
                // The session's record lives as long as its events.
                .expire(&record, ttl as i64)
                .ignore()
                .exec(con)
        });
        if let Err(err) = stored {
            // The live stream still carries it; a resumption from before it finds the gap and
            // is told to start over, never handed the stream without it.
            tracing::warn!(%err, "cannot keep an SSE event in Redis");
        }
    }

    fn replay(&self, session: &str, stream: &str, after: u64) -> Option<Vec<(u64, String)>> {
        let events = self.events(session, stream, false)?;
        let (first, _) = events.first()?;
        // A gap: events after `after` are gone (trimmed, or one that could not be stored).
        if first.saturating_sub(1) > after {
            return None;
        }
        let wanted: Vec<(u64, String)> =
            events.into_iter().filter(|(seq, _)| *seq > after).collect();
        let consecutive = wanted.windows(2).all(|pair| pair[1].0 == pair[0].0 + 1)
            && wanted.first().is_none_or(|(seq, _)| *seq == after + 1);
        consecutive.then_some(wanted)
    }

    fn stream_ended(&self, _session: &str, _stream: &str) {
        // Kept until the session's keys expire: a client may resume an ended stream on any
        // replica, and Redis bounds each stream by itself.
    }

    fn forget_session(&self, session: &str) {
        let streams = self.shared.key(&["streams-of", session]);
        let record = self.shared.key(&["session", session]);
        let forgotten = self.shared.command(|con| {
            let keys: Vec<String> = redis::cmd("SMEMBERS").arg(&streams).query(con)?;
            let mut pipe = redis::pipe();
            for key in keys {
                pipe.del(key).ignore();
            }
            pipe.del(&streams).ignore().del(&record).ignore().exec(con)
        });
        if let Err(err) = forgotten {
            tracing::warn!(%err, "cannot forget a session's events in Redis (they expire)");
        }
    }

    fn remember_session(&self, session: &str, record: &str) {
        let key = self.shared.key(&["session", session]);
        let ttl = self.ttl_secs();
        if let Err(err) = self.shared.command(|con| {
            redis::cmd("SET")
                .arg(&key)
                .arg(record)
                .arg("EX")
                .arg(ttl)
                .exec(con)
        }) {
            tracing::warn!(%err, "cannot keep a session's record in Redis: only this replica serves it");
        }
    }

    fn recall_session(&self, session: &str) -> Option<String> {
        let key = self.shared.key(&["session", session]);
        self.shared
            .command(|con| redis::cmd("GET").arg(&key).query::<Option<String>>(con))
            .inspect_err(|err| tracing::warn!(%err, "cannot read a session's record from Redis"))
            .ok()
            .flatten()
    }

    fn last_seq(&self, session: &str, stream: &str) -> Option<u64> {
        self.events(session, stream, true)?
            .last()
            .map(|(seq, _)| *seq)
    }
}
