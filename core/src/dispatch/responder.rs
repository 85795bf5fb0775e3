//! Where a request's answer goes: straight out, or into the batch it came in.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::middleware::{Observer, Outcome};
use super::modern::ModernStamp;
use crate::metrics::{AnswerKind, Metered, Series};
use crate::protocol::{Content, ProtocolVersion, ToolOutput};
use crate::wire::{
    ErrorCode, ErrorObject, RequestId, error_frame, result_frame, result_frame_with,
};

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
            OutboundSender::Nowhere => {}
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
            OutboundSender::Nowhere => {}
        }
    }

    /// The request stream frames go to, if not the session's channel.
    pub(crate) fn stream(&self) -> Option<&Arc<RequestStream>> {
        match self {
            OutboundSender::Session { .. } | OutboundSender::Nowhere => None,
            OutboundSender::Stream(stream) => Some(stream),
        }
    }

    /// Whether a request sent this way can be answered by the client (a stateless HTTP
    /// exchange has no way back).
    pub(crate) fn has_back_channel(&self) -> bool {
        match self {
            OutboundSender::Session { .. } => true,
            OutboundSender::Stream(stream) => stream.back_channel,
            OutboundSender::Nowhere => false,
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
    back_channel: bool,
}

#[derive(Default)]
struct StreamQueue {
    /// Counted under the lock that places each answer, so the one that takes it to zero ends
    /// the stream behind every answer counted before it.
    answers_left: usize,
    items: VecDeque<StreamItem>,
    /// The last answer and the end, kept out of `items`: most streams carry nothing else, and
    /// then the queue is never allocated.
    ending: Ending,
    waker: Option<Waker>,
}

#[derive(Default)]
enum Ending {
    #[default]
    Open,
    /// The stream's last answer, then its end.
    Answer(String),
    /// The end (the last request's answer was suppressed, or there were none).
    End,
    /// The end was taken.
    Taken,
}

impl StreamQueue {
    fn pop(&mut self) -> Option<StreamItem> {
        if let Some(item) = self.items.pop_front() {
            return Some(item);
        }
        match std::mem::replace(&mut self.ending, Ending::Taken) {
            Ending::Answer(frame) => {
                self.ending = Ending::End;
                Some(StreamItem::Frame(frame))
            }
            Ending::End => Some(StreamItem::End),
            open @ (Ending::Open | Ending::Taken) => {
                self.ending = open;
                None
            }
        }
    }
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
            queue: Mutex::new(StreamQueue {
                ending: if answers == 0 {
                    Ending::End
                } else {
                    Ending::Open
                },
                answers_left: answers,
                ..StreamQueue::default()
            }),
            back_channel,
        });
        let receiver = StreamReceiver {
            stream: stream.clone(),
        };
        (stream, receiver)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StreamQueue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `item` unless the stream has ended: after its end no one reads it.
    fn push(&self, item: StreamItem) {
        let waker = {
            let mut queue = self.lock();
            if !matches!(queue.ending, Ending::Open) {
                return;
            }
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

    /// Once ended, a late notification has nowhere to go (its request was answered).
    pub(crate) fn send(&self, frame: String) {
        self.push(StreamItem::Frame(frame));
    }

    fn answer(&self, frame: Option<String>) {
        let waker = {
            let mut queue = self.lock();
            let left = queue.answers_left;
            queue.answers_left = left.saturating_sub(1);
            match (left, frame) {
                (1, Some(frame)) => queue.ending = Ending::Answer(frame),
                (1, None) => queue.ending = Ending::End,
                // Past the end: no request answers twice.
                (0, _) => {}
                (_, Some(frame)) => queue.items.push_back(StreamItem::Frame(frame)),
                (_, None) => {}
            }
            queue.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl StreamReceiver {
    /// The next item if one is there now.
    pub(crate) fn try_recv(&mut self) -> Option<StreamItem> {
        self.stream.lock().pop()
    }

    /// The next item. Every stream ends with [`StreamItem::End`] (a request's answer is
    /// always delivered or suppressed), after which nothing more comes.
    pub(crate) async fn recv(&mut self) -> StreamItem {
        std::future::poll_fn(|cx| {
            let mut queue = self.stream.lock();
            match queue.pop() {
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
    /// A modern request's: what its result must carry, and whether with cache hints.
    stamp: Option<(Arc<ModernStamp>, bool)>,
    /// The middlewares that hear how it ended, when there are any.
    observer: Option<Box<Observer>>,
    /// Where it is counted, when metrics are on.
    metered: Option<Metered>,
    /// What kind of answer a result is (set where that is known: an `isError` tool result, an
    /// input-required round, a task), and the code of an error answer.
    ending: AnswerKind,
    error_code: Option<ErrorCode>,
    /// The request's span (`Span::none()` unless a subscriber wants spans).
    span: tracing::Span,
}

impl Responder {
    pub(crate) fn new(out: OutboundSender, id: RequestId, target: ReplyTarget) -> Self {
        Responder {
            out,
            id,
            target,
            done: false,
            stamp: None,
            observer: None,
            metered: None,
            ending: AnswerKind::Result,
            error_code: None,
            span: tracing::Span::none(),
        }
    }

    /// The request's span: its outcome is recorded on it when it is answered.
    pub(crate) fn traced(mut self, span: tracing::Span) -> Self {
        self.span = span;
        self
    }

    /// Counted in the server's metrics from now until its answer.
    pub(crate) fn metered(mut self, metered: Option<Metered>) -> Self {
        self.metered = metered;
        self
    }

    /// A `tools/call` of the tool that counts in `series`, too.
    pub(crate) fn count_tool(&mut self, series: Option<&Arc<Series>>) {
        if let (Some(metered), Some(series)) = (&mut self.metered, series) {
            metered.of_tool(series.clone());
        }
    }

    /// Its result, when it is one, is of this kind.
    pub(crate) fn ending(mut self, ending: AnswerKind) -> Self {
        self.ending = ending;
        self
    }

    /// The middlewares' `after` hears how this request ends.
    pub(crate) fn observed(mut self, observer: Observer) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// One of the middlewares refused it.
    pub(crate) fn refused(mut self) -> Self {
        self.ending = AnswerKind::Refused;
        self
    }

    /// Results get `resultType`, the server's identity and, if `cached`, the cache hints.
    pub(crate) fn stamped(mut self, stamp: Arc<ModernStamp>, cached: bool) -> Self {
        self.stamp = Some((stamp, cached));
        self
    }

    /// Results go out as given (they were built whole, as an input-required one is).
    pub(crate) fn unstamped(mut self) -> Self {
        self.stamp = None;
        self
    }

    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Where this request's related frames (progress, logs, requests to the client) go.
    pub(crate) fn out(&self) -> &OutboundSender {
        &self.out
    }

    /// Answers a tool's output (counted as a tool error when it is one).
    pub(crate) fn tool_result(mut self, output: &ToolOutput, version: ProtocolVersion) {
        if output.is_error && self.ending == AnswerKind::Result {
            self.ending = AnswerKind::ToolError;
        }
        // A stamp beside the output's own `_meta` is merged into it as a value (`result`);
        // otherwise the result is written by hand, straight into its frame, and a stamp is
        // spliced in before its closing brace.
        if self.stamp.is_some() && output.meta.is_some() {
            return self.result(&output.as_result(version));
        }
        let text_len: usize = output.content.iter().map(Content::text_len).sum();
        self.result_written(text_len + 64, |json| {
            output.write_result(version, json).map_err(|err| {
                ErrorObject::internal(format!(
                    "Internal error: failed to serialise a result: {err}"
                ))
            })
        });
    }

    pub(crate) fn result<T: Serialize + ?Sized>(mut self, result: &T) {
        let frame = match &self.stamp {
            None => result_frame(&self.id, result),
            // Most results have no `_meta` of their own: the stamp is spliced into their text.
            Some((stamp, cached)) => match serde_json::to_string(result) {
                Ok(text)
                    if text.starts_with('{')
                        && text.len() > 2
                        && memchr::memmem::find(text.as_bytes(), b"\"_meta\"").is_none() =>
                {
                    let members = stamp.text(*cached);
                    let written =
                        result_frame_with(&self.id, text.len() + members.len() + 1, |json| {
                            json.push_str(&text[..text.len() - 1]);
                            json.push(',');
                            json.push_str(members);
                            json.push('}');
                            Ok::<(), ErrorObject>(())
                        });
                    written.unwrap_or_else(|error| error_frame(Some(&self.id), &error))
                }
                _ => Self::stamped_value(&self.id, stamp, *cached, result),
            },
        };
        self.deliver(Some(frame));
    }

    /// The stamp merged into the result as a value (its own `_meta` kept beside ours).
    fn stamped_value<T: Serialize + ?Sized>(
        id: &RequestId,
        stamp: &ModernStamp,
        cached: bool,
        result: &T,
    ) -> String {
        match serde_json::to_value(result) {
            Ok(Value::Object(mut map)) => {
                stamp.apply(&mut map, cached);
                result_frame(id, &map)
            }
            Ok(other) => result_frame(id, &other),
            Err(err) => error_frame(
                Some(id),
                &ErrorObject::internal(format!("Internal error: {err}")),
            ),
        }
    }

    /// Answers with a result that `write` appends to the frame as JSON text this engine
    /// serialised itself (not re-validated), about `result_len` bytes; or with its error.
    pub(crate) fn result_written(
        mut self,
        result_len: usize,
        write: impl FnOnce(&mut String) -> Result<(), ErrorObject>,
    ) {
        let stamp = self
            .stamp
            .as_ref()
            .map(|(stamp, cached)| stamp.text(*cached));
        let written = result_frame_with(&self.id, result_len, |json| {
            write(json)?;
            // The members go in before the object's closing brace (lists are never `{}`).
            if let Some(members) = stamp
                && json.ends_with('}')
            {
                json.pop();
                json.push(',');
                json.push_str(members);
                json.push('}');
            }
            Ok(())
        });
        let frame = match written {
            Ok(frame) => frame,
            Err(error) => error_frame(Some(&self.id), &error),
        };
        self.deliver(Some(frame));
    }

    pub(crate) fn error(mut self, error: ErrorObject) {
        if self.ending != AnswerKind::Refused {
            self.ending = AnswerKind::of_error(error.code);
            self.error_code = Some(error.code);
        }
        let frame = error_frame(Some(&self.id), &error);
        self.deliver(Some(frame));
    }

    /// Answers nothing: the request was cancelled.
    pub(crate) fn suppress(mut self) {
        self.deliver(None);
    }

    fn deliver(&mut self, frame: Option<String>) {
        self.done = true;
        let ending = if frame.is_none() {
            AnswerKind::Cancelled
        } else {
            self.ending
        };
        // Counted before the answer goes: a client holding its answer finds it counted.
        if let Some(metered) = self.metered.take() {
            metered.ended(ending);
        }
        super::trace::record_outcome(&self.span, ending, self.error_code);
        match &self.target {
            ReplyTarget::Direct => self.out.answer(frame),
            ReplyTarget::Batch(collector) => collector.complete(frame),
        }
        // After the answer is out: what a middleware does then cannot hold it up or lose it.
        if let Some(observer) = self.observer.take() {
            observer.finish(outcome_of(ending, self.error_code));
        }
    }
}

/// The outcome middlewares hear for an answer counted as `ending`.
fn outcome_of(ending: AnswerKind, error_code: Option<ErrorCode>) -> Outcome {
    match (ending, error_code) {
        (AnswerKind::Result, _) => Outcome::Result,
        (AnswerKind::ToolError, _) => Outcome::ToolError,
        (AnswerKind::InputRequired, _) => Outcome::InputRequired,
        (AnswerKind::TaskCreated, _) => Outcome::TaskCreated,
        (AnswerKind::Cancelled, _) => Outcome::Cancelled,
        (AnswerKind::Refused, _) => Outcome::Refused,
        (_, Some(code)) => Outcome::Error(code),
        (_, None) => Outcome::Error(ErrorCode::INTERNAL_ERROR),
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if !self.done {
            self.deliver(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(receiver: &mut StreamReceiver) -> Vec<String> {
        std::iter::from_fn(|| receiver.try_recv())
            .map(|item| match item {
                StreamItem::Frame(frame) => frame,
                StreamItem::Release => "release".into(),
                StreamItem::End => "end".into(),
            })
            .collect()
    }

    #[test]
    fn the_answer_comes_after_what_was_sent_and_the_end_last() {
        let (stream, mut receiver) = RequestStream::new(1, true);
        stream.send("progress".into());
        stream.release_connection();
        stream.answer(Some("answer".into()));
        stream.send("too late".into());
        stream.release_connection();
        stream.answer(Some("twice".into()));
        assert_eq!(
            drain(&mut receiver),
            ["progress", "release", "answer", "end"]
        );
        assert!(receiver.try_recv().is_none());
    }

    #[test]
    fn streams_without_answers_end_at_once_or_when_the_last_is_suppressed() {
        let (_stream, mut receiver) = RequestStream::new(0, true);
        assert_eq!(drain(&mut receiver), ["end"]);
        let (stream, mut receiver) = RequestStream::new(2, true);
        stream.answer(Some("first".into()));
        assert_eq!(drain(&mut receiver), ["first"]);
        stream.answer(None);
        assert_eq!(drain(&mut receiver), ["end"]);
    }

    #[test]
    fn a_batch_answered_from_many_threads_ends_behind_every_answer() {
        for _ in 0..200 {
            let (stream, mut receiver) = RequestStream::new(4, true);
            let threads: Vec<_> = (0..4)
                .map(|n| {
                    let stream = stream.clone();
                    std::thread::spawn(move || stream.answer(Some(n.to_string())))
                })
                .collect();
            for thread in threads {
                thread.join().expect("answering thread");
            }
            let mut items = drain(&mut receiver);
            assert_eq!(items.pop().as_deref(), Some("end"));
            items.sort();
            assert_eq!(items, ["0", "1", "2", "3"]);
        }
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_by_the_answer() {
        let (stream, mut receiver) = RequestStream::new(1, true);
        let waiting = tokio::spawn(async move {
            let first = receiver.recv().await;
            let second = receiver.recv().await;
            (first, second)
        });
        tokio::task::yield_now().await;
        stream.answer(Some("answer".into()));
        let (first, second) = waiting.await.expect("receiver");
        assert!(matches!(first, StreamItem::Frame(frame) if frame == "answer"));
        assert!(matches!(second, StreamItem::End));
    }
}
