//! Where a request's answer goes (straight out, or into the batch it came in), and what its
//! answer tells the metrics and the middlewares.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use super::middleware::{Observer, Outcome};
use super::modern::ModernStamp;
use super::outbound::OutboundSender;
use crate::metrics::{AnswerKind, Metered, Series};
use crate::protocol::{Content, ProtocolVersion, ToolOutput};
use crate::wire::{
    ErrorCode, ErrorObject, RequestId, error_frame, result_frame, result_frame_with,
};

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
