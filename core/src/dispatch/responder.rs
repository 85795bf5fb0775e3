//! Where a request's answer goes: straight out, or into the batch it came in.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use crate::wire::{ErrorObject, RequestId, error_frame, result_frame, result_frame_raw};

/// A host's wake-up for outbound frames (see [`HostHooks`](crate::HostHooks)).
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

/// Where a session's outbound frames go: the session's one channel (read by
/// [`Outbound`](crate::Outbound)), or, for frames tied to one inbound message on a transport
/// that keeps those apart (an HTTP POST's own stream), that message's stream.
#[derive(Clone)]
pub(crate) enum OutboundSender {
    Session {
        tx: UnboundedSender<String>,
        notify: Option<Notify>,
    },
    Stream(Arc<RequestStream>),
}

impl OutboundSender {
    pub(crate) fn new(tx: UnboundedSender<String>, notify: Option<Notify>) -> Self {
        OutboundSender::Session { tx, notify }
    }

    /// Sends a frame that is not an answer (a notification, a request to the client).
    pub(crate) fn send(&self, frame: String) {
        match self {
            OutboundSender::Session { tx, notify } => {
                if tx.send(frame).is_ok()
                    && let Some(notify) = notify
                {
                    notify();
                }
            }
            OutboundSender::Stream(stream) => stream.send(frame),
        }
    }

    /// Sends the answer to a request (`None`: it has none, being cancelled).
    pub(crate) fn answer(&self, frame: Option<String>) {
        match self {
            OutboundSender::Session { .. } => {
                if let Some(frame) = frame {
                    self.send(frame);
                }
            }
            OutboundSender::Stream(stream) => stream.answer(frame),
        }
    }

    /// The request stream frames go to, if not the session's channel.
    pub(crate) fn stream(&self) -> Option<&Arc<RequestStream>> {
        match self {
            OutboundSender::Session { .. } => None,
            OutboundSender::Stream(stream) => Some(stream),
        }
    }

    /// Whether a request sent this way can be answered by the client (a stateless HTTP
    /// exchange has no way back).
    pub(crate) fn has_back_channel(&self) -> bool {
        match self {
            OutboundSender::Session { .. } => true,
            OutboundSender::Stream(stream) => stream.back_channel,
        }
    }
}

/// What flows on a [`RequestStream`].
#[derive(Debug)]
pub(crate) enum StreamItem {
    Frame(String),
    /// Close the HTTP connection carrying the stream; the stream itself goes on.
    Release,
    /// Every request of the inbound message was answered (or cancelled): the stream is done.
    End,
}

/// The frames tied to the requests of one inbound message: their notifications, requests to
/// the client, and answers; it ends once each request has had its answer (or was cancelled).
///
/// A queue under a lock rather than a channel: most streams carry one answer, and a channel's
/// first block costs a kilobyte per request.
pub(crate) struct RequestStream {
    queue: Mutex<StreamQueue>,
    answers_left: AtomicUsize,
    back_channel: bool,
}

#[derive(Default)]
struct StreamQueue {
    items: VecDeque<StreamItem>,
    waker: Option<Waker>,
}

/// The receiving end of a [`RequestStream`].
pub(crate) struct StreamReceiver {
    stream: Arc<RequestStream>,
}

impl RequestStream {
    /// A stream expecting `answers` answers; `back_channel`: whether the client can answer
    /// requests sent on it.
    pub(crate) fn new(answers: usize, back_channel: bool) -> (Arc<Self>, StreamReceiver) {
        let stream = Arc::new(RequestStream {
            queue: Mutex::new(StreamQueue::default()),
            answers_left: AtomicUsize::new(answers),
            back_channel,
        });
        if answers == 0 {
            stream.push(StreamItem::End);
        }
        let receiver = StreamReceiver {
            stream: stream.clone(),
        };
        (stream, receiver)
    }

    fn push(&self, item: StreamItem) {
        let waker = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.items.push_back(item);
            queue.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Asks the transport to close the connection that carries this stream now (SSE
    /// polling: the client reconnects and resumes).
    pub(crate) fn release_connection(&self) {
        self.push(StreamItem::Release);
    }

    pub(crate) fn send(&self, frame: String) {
        // Once ended, a late notification has nowhere to go (its request was answered).
        if self.answers_left.load(Ordering::Acquire) > 0 {
            self.push(StreamItem::Frame(frame));
        }
    }

    fn answer(&self, frame: Option<String>) {
        if let Some(frame) = frame {
            self.push(StreamItem::Frame(frame));
        }
        let left = self
            .answers_left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if left == Ok(1) {
            self.push(StreamItem::End);
        }
    }
}

impl StreamReceiver {
    /// The next item if one is there now.
    pub(crate) fn try_recv(&mut self) -> Option<StreamItem> {
        self.stream
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .items
            .pop_front()
    }

    /// The next item. Every stream ends with [`StreamItem::End`] (a request's answer is
    /// always delivered or suppressed), after which nothing more comes.
    pub(crate) async fn recv(&mut self) -> StreamItem {
        std::future::poll_fn(|cx| {
            let mut queue = self.stream.queue.lock().unwrap_or_else(|e| e.into_inner());
            match queue.items.pop_front() {
                Some(item) => Poll::Ready(item),
                None => {
                    queue.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
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
        let was = *remaining;
        *remaining = remaining.saturating_sub(1);
        if was == 1 {
            if frames.is_empty() {
                self.out.answer(None);
            } else {
                let joined = format!("[{}]", frames.join(","));
                frames.clear();
                self.out.answer(Some(joined));
            }
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

    /// Where this request's related frames (progress, logs, requests to the client) go.
    pub(crate) fn out(&self) -> &OutboundSender {
        &self.out
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
            ReplyTarget::Direct => self.out.answer(frame),
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
