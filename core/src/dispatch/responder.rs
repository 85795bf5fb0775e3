//! Where a request's answer goes: straight out, or into the batch it came in.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use crate::wire::{ErrorObject, RequestId, error_frame, result_frame, result_frame_raw};

/// A host's wake-up for outbound frames (see [`HostHooks`](crate::HostHooks)).
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

/// The sending side of a session's outbound frames: the channel [`Outbound`](crate::Outbound)
/// reads, and the host's wake-up, if it gave one.
#[derive(Clone)]
pub(crate) struct OutboundSender {
    tx: UnboundedSender<String>,
    notify: Option<Notify>,
}

impl OutboundSender {
    pub(crate) fn new(tx: UnboundedSender<String>, notify: Option<Notify>) -> Self {
        OutboundSender { tx, notify }
    }

    pub(crate) fn send(&self, frame: String) {
        if self.tx.send(frame).is_ok()
            && let Some(notify) = &self.notify
        {
            notify();
        }
    }
}

/// Collects the answers of one batch and sends them as one JSON array when the last arrives.
pub(crate) struct BatchCollector {
    out: OutboundSender,
    state: Mutex<(Vec<String>, usize)>,
}

impl BatchCollector {
    pub(crate) fn new(out: OutboundSender, expected: usize) -> Arc<Self> {
        Arc::new(BatchCollector {
            out,
            state: Mutex::new((Vec::with_capacity(expected), expected)),
        })
    }

    /// Records one answer (`None`: a request whose answer is suppressed).
    pub(crate) fn complete(&self, frame: Option<String>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (frames, remaining) = &mut *state;
        if let Some(frame) = frame {
            frames.push(frame);
        }
        *remaining = remaining.saturating_sub(1);
        if *remaining == 0 && !frames.is_empty() {
            let joined = format!("[{}]", frames.join(","));
            frames.clear();
            self.out.send(joined);
        }
    }
}

pub(crate) enum ReplyTarget {
    Direct,
    Batch(Arc<BatchCollector>),
}

/// The obligation to answer one request exactly once (or to say nothing, when cancelled).
/// Dropping it unanswered counts as saying nothing, so a batch never waits forever.
pub(crate) struct Responder {
    out: OutboundSender,
    id: RequestId,
    target: ReplyTarget,
    done: bool,
}

impl Responder {
    pub(crate) fn new(out: OutboundSender, id: RequestId, target: ReplyTarget) -> Self {
        Responder {
            out,
            id,
            target,
            done: false,
        }
    }

    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    pub(crate) fn result<T: Serialize + ?Sized>(mut self, result: &T) {
        let frame = result_frame(&self.id, result);
        self.deliver(Some(frame));
    }

    /// Answers with `result`, a JSON text this engine serialised itself (not re-validated).
    pub(crate) fn result_json(mut self, result: &str) {
        let frame = result_frame_raw(&self.id, result);
        self.deliver(Some(frame));
    }

    pub(crate) fn error(mut self, error: ErrorObject) {
        let frame = error_frame(Some(&self.id), &error);
        self.deliver(Some(frame));
    }

    /// Answers nothing: the request was cancelled.
    pub(crate) fn suppress(mut self) {
        self.deliver(None);
    }

    fn deliver(&mut self, frame: Option<String>) {
        self.done = true;
        match &self.target {
            ReplyTarget::Direct => {
                if let Some(frame) = frame {
                    self.out.send(frame);
                }
            }
            ReplyTarget::Batch(collector) => collector.complete(frame),
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if !self.done {
            self.deliver(None);
        }
    }
}
