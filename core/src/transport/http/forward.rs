//! A POST's answers on their way out: at once as one JSON body, or as they come over the
//! request's SSE stream.

use super::sse::SseStream;
use crate::dispatch::{StreamItem, StreamReceiver};

/// What is already on a fresh stream: its one answer when that is all there is (a call that
/// finished at its first poll: no allocation on this path), or the items so far.
pub(super) fn drain_ready(items: &mut StreamReceiver) -> Result<String, Vec<StreamItem>> {
    let mut ready = Vec::new();
    match items.try_recv() {
        Some(StreamItem::Frame(answer)) => match items.try_recv() {
            Some(StreamItem::End) => return Ok(answer),
            second => {
                ready.push(StreamItem::Frame(answer));
                ready.extend(second);
            }
        },
        first => ready.extend(first),
    }
    while !matches!(ready.last(), None | Some(StreamItem::End)) {
        match items.try_recv() {
            Some(item) => ready.push(item),
            None => break,
        }
    }
    Err(ready)
}

/// [`drain_ready`]'s outcome as the items it stands for.
pub(super) fn as_items(ready: Result<String, Vec<StreamItem>>) -> Vec<StreamItem> {
    match ready {
        Ok(answer) => vec![StreamItem::Frame(answer), StreamItem::End],
        Err(items) => items,
    }
}

/// The last frame of the stream (its answer) once the stream ends; `elsewhere` gets the
/// frames before it.
pub(super) async fn last_frame(
    ready: Vec<StreamItem>,
    items: &mut StreamReceiver,
    mut elsewhere: impl FnMut(String),
) -> Option<String> {
    let mut last: Option<String> = None;
    let mut take = |item: StreamItem| match item {
        StreamItem::Frame(frame) => {
            if let Some(earlier) = last.replace(frame) {
                elsewhere(earlier);
            }
            true
        }
        StreamItem::Release => true,
        StreamItem::End => false,
    };
    let mut going = ready.into_iter().all(&mut take);
    while going {
        going = take(items.recv().await);
    }
    last
}

/// Feeds a POST's stream items to its SSE stream until the last answer.
pub(super) async fn forward(sse: &SseStream, ready: Vec<StreamItem>, mut items: StreamReceiver) {
    for item in ready {
        if !apply(sse, item) {
            return;
        }
    }
    while apply(sse, items.recv().await) {}
}

/// False once the stream has ended.
pub(super) fn apply(sse: &SseStream, item: StreamItem) -> bool {
    match item {
        StreamItem::Frame(frame) => sse.push(&frame),
        StreamItem::Release => sse.release_connection(),
        StreamItem::End => return false,
    }
    true
}
