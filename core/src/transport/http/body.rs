//! Response bodies: a complete one, or an SSE stream fed through a channel.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Sleep;

pub(crate) enum Body {
    Full(Option<Bytes>),
    Sse(SseBody),
}

impl Body {
    pub(crate) fn empty() -> Self {
        Body::Full(None)
    }

    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Body::Full(Some(bytes.into()))
    }
}

/// An SSE body: chunks as the stream's writer sends them, a comment line when idle for
/// `keep_alive`, and the end when the writer drops its sender.
pub(crate) struct SseBody {
    rx: UnboundedReceiver<Bytes>,
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    /// Chunks sent and not yet taken by the connection, when the writer bounds them.
    pending: Option<Arc<AtomicUsize>>,
    /// Bytes sent and not yet taken by the connection, when the writer bounds them.
    pending_bytes: Option<Arc<AtomicUsize>>,
    /// Counts the stream among the server's open ones while the connection holds it.
    _open: Option<crate::metrics::LiveGauge>,
}

impl SseBody {
    pub(crate) fn new(rx: UnboundedReceiver<Bytes>, keep_alive: Option<Duration>) -> Self {
        SseBody {
            rx,
            keep_alive: keep_alive.map(|every| (every, Box::pin(tokio::time::sleep(every)))),
            pending: None,
            pending_bytes: None,
            _open: None,
        }
    }

    /// Counted open (a gauge of the server's metrics) until the connection drops it.
    pub(crate) fn counted(mut self, open: Option<crate::metrics::LiveGauge>) -> Self {
        self._open = open;
        self
    }

    /// Counts down `pending_bytes` by each chunk's size as the connection takes it.
    pub(crate) fn counting_bytes(mut self, pending_bytes: Arc<AtomicUsize>) -> Self {
        self.pending_bytes = Some(pending_bytes);
        self
    }

    /// Counts down `pending` as the connection takes each chunk, so the writer can bound what
    /// waits for a slow client.
    pub(crate) fn counting(mut self, pending: Arc<AtomicUsize>) -> Self {
        self.pending = Some(pending);
        self
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Sse(sse) => {
                if let Poll::Ready(chunk) = sse.rx.poll_recv(cx) {
                    if let Some(chunk) = &chunk {
                        if let Some(pending) = &sse.pending {
                            pending.fetch_sub(1, Ordering::AcqRel);
                        }
                        if let Some(bytes) = &sse.pending_bytes {
                            bytes.fetch_sub(chunk.len(), Ordering::AcqRel);
                        }
                    }
                    if let Some((every, timer)) = &mut sse.keep_alive {
                        timer.as_mut().reset(tokio::time::Instant::now() + *every);
                    }
                    return Poll::Ready(chunk.map(|b| Ok(Frame::data(b))));
                }
                if let Some((every, timer)) = &mut sse.keep_alive
                    && timer.as_mut().poll(cx).is_ready()
                {
                    timer.as_mut().reset(tokio::time::Instant::now() + *every);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                        b": keep-alive\n\n",
                    )))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Body::Full(None) => SizeHint::with_exact(0),
            Body::Sse(_) => SizeHint::default(),
        }
    }
}
