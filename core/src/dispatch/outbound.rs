//! Where a session's outbound frames go, and the bound on what waits to be written.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc::UnboundedSender;

use super::request_stream::RequestStream;

/// The bytes of a session's outbound frames not yet taken by its writer. A transport that
/// cannot write (a client that stopped reading) sees it grow, and stops reading new requests
/// until it has come down (see `Server::serve_until`), so nothing is buffered without bound
/// and nothing is lost.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    /// Set while the reader waits for the backlog to come down: only then is a take announced
    /// (announcing takes a lock, too much for every frame).
    waiting: AtomicBool,
    taken: tokio::sync::Notify,
}

impl Backlog {
    fn queued(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::SeqCst);
    }

    pub(crate) fn taken(&self, bytes: usize) {
        self.bytes.fetch_sub(bytes, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) {
            self.taken.notify_waiters();
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::SeqCst)
    }

    /// Completes once at most `bytes` wait. (A take after `waiting` is set notifies; one
    /// before it is seen by the check that follows.)
    pub(crate) async fn down_to(&self, bytes: usize) {
        loop {
            self.waiting.store(true, Ordering::SeqCst);
            let taken = self.taken.notified();
            if self.bytes() <= bytes {
                self.waiting.store(false, Ordering::SeqCst);
                return;
            }
            taken.await;
        }
    }
}

/// A host's wake-up for outbound frames (see [`HostHooks`](crate::host::HostHooks)).
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

/// A transport's own place for a session's frames, written to as each is sent (quick, and it
/// never blocks): the HTTP transport's standalone stream when its events are kept in memory.
pub(crate) type FrameSink = Arc<dyn Fn(String) + Send + Sync>;

/// Where a session's outbound frames go: the session's one channel (read by
/// [`Outbound`](crate::Outbound)), or, for frames tied to one inbound message on a transport
/// that keeps those apart (an HTTP POST's own stream), that message's stream.
#[derive(Clone)]
pub(crate) enum OutboundSender {
    Session {
        tx: UnboundedSender<String>,
        notify: Option<Notify>,
        backlog: Arc<Backlog>,
    },
    Stream(Arc<RequestStream>),
    /// Straight to the transport, with no channel and no task to read one.
    Sink(FrameSink),
    /// A session for one exchange: what is not tied to its request has no way to the client.
    Nowhere,
}

impl OutboundSender {
    pub(crate) fn new(
        tx: UnboundedSender<String>,
        notify: Option<Notify>,
        backlog: Arc<Backlog>,
    ) -> Self {
        OutboundSender::Session {
            tx,
            notify,
            backlog,
        }
    }

    /// Sends a frame that is not an answer (a notification, a request to the client).
    pub(crate) fn send(&self, frame: String) {
        match self {
            OutboundSender::Session {
                tx,
                notify,
                backlog,
            } => {
                // Counted in before it can be taken: a writer on another thread could otherwise
                // count it out first, and the count would wrap.
                let bytes = frame.len();
                backlog.queued(bytes);
                if tx.send(frame).is_err() {
                    backlog.taken(bytes);
                } else if let Some(notify) = notify {
                    notify();
                }
            }
            OutboundSender::Stream(stream) => stream.send(frame),
            OutboundSender::Sink(sink) => sink(frame),
            OutboundSender::Nowhere => {}
        }
    }

    /// Sends the answer to a request (`None`: it has none, being cancelled).
    pub(crate) fn answer(&self, frame: Option<String>) {
        match self {
            OutboundSender::Session { .. } | OutboundSender::Sink(_) => {
                if let Some(frame) = frame {
                    self.send(frame);
                }
            }
            OutboundSender::Stream(stream) => stream.answer(frame),
            OutboundSender::Nowhere => {}
        }
    }

    /// The request stream frames go to, if not the session's channel.
    pub(crate) fn stream(&self) -> Option<&Arc<RequestStream>> {
        match self {
            OutboundSender::Session { .. } | OutboundSender::Sink(_) | OutboundSender::Nowhere => {
                None
            }
            OutboundSender::Stream(stream) => Some(stream),
        }
    }

    /// Whether a request sent this way can be answered by the client (a stateless HTTP
    /// exchange has no way back).
    pub(crate) fn has_back_channel(&self) -> bool {
        match self {
            OutboundSender::Session { .. } | OutboundSender::Sink(_) => true,
            OutboundSender::Stream(stream) => stream.back_channel,
            OutboundSender::Nowhere => false,
        }
    }
}
