//! The frames tied to one inbound message (an HTTP POST's own stream), in order, ending after
//! the last answer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

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
    pub(super) back_channel: bool,
    /// Who sent the request (its own bearer token's viewer), when its transport knows: what it
    /// is shown is decided by it, not by another request of the same session.
    viewer: std::sync::OnceLock<Arc<crate::catalog::visibility::Viewer>>,
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
    /// The request came from `who` (set once, before the request is handled).
    pub(crate) fn set_viewer(&self, who: Arc<crate::catalog::visibility::Viewer>) {
        let _ = self.viewer.set(who);
    }

    pub(crate) fn viewer(&self) -> Option<&Arc<crate::catalog::visibility::Viewer>> {
        self.viewer.get()
    }

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
            viewer: std::sync::OnceLock::new(),
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

    pub(super) fn answer(&self, frame: Option<String>) {
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
