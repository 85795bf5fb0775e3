//! The contract of an SSE event store (Streamable HTTP's resumable streams, and the records that
//! let another replica take a session over). Low in the stack, beside the other contracts, so
//! that a server's options can hold one without reaching up to the transport; the transport
//! keeps the in-memory store and re-exports this.

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

    /// True when the store keeps its events in this process and never blocks or waits on
    /// anything outside it (the default: false, as a shared store may); see
    /// [`TaskStore::in_process`](crate::TaskStore::in_process).
    fn in_process(&self) -> bool {
        false
    }
}
