//! What a tool handler gets besides its arguments.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::modern::{ModernRound, Signal, TraceContext};
use super::peer;
use super::{RequestOptions, RequestStream, SessionShared};
use crate::Error;
use crate::cancel::CallCancel;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, Root};
use crate::tasks::LiveTask;
use crate::wire::{RequestId, notification_frame};

pub(crate) struct CallState {
    session: Arc<SessionShared>,
    /// The stream of the call's answer, when the transport keeps one per request (HTTP): its
    /// progress, logs and requests to the client go there. `None`: the session's channel.
    stream: Option<Arc<RequestStream>>,
    pub(crate) request_id: RequestId,
    tool: String,
    progress_token: Option<Value>,
    pub(crate) cancel: Arc<CallCancel>,
    last_progress: Mutex<Option<f64>>,
    finished: AtomicBool,
    /// A 2026-07-28 call's own declarations and MRTR round; `None` in a legacy session. Boxed:
    /// it is large, and a legacy call should not move its bytes around.
    pub(crate) modern: Option<Box<ModernRound>>,
    /// A legacy call's W3C trace context from its `_meta`, when it carried one (a modern
    /// call's is in its envelope).
    pub(crate) trace: Option<Box<TraceContext>>,
}

impl CallState {
    pub(crate) fn new(
        session: Arc<SessionShared>,
        stream: Option<Arc<RequestStream>>,
        request_id: RequestId,
        tool: String,
        cancel: Arc<CallCancel>,
        modern: Option<Box<ModernRound>>,
        meta: Option<&Value>,
    ) -> Arc<Self> {
        let progress_token = super::call::progress_token(meta);
        // A legacy request's trace context; a modern one's is in its envelope already.
        let trace = match (&modern, meta.and_then(Value::as_object)) {
            (None, Some(meta)) if meta.contains_key("traceparent") => {
                Some(Box::new(TraceContext::from_meta(Some(meta))))
            }
            _ => None,
        };
        Arc::new(CallState {
            session,
            stream,
            request_id,
            tool,
            progress_token,
            cancel,
            last_progress: Mutex::new(None),
            finished: AtomicBool::new(false),
            modern,
            trace,
        })
    }

    fn send(&self, frame: String) {
        match &self.stream {
            Some(stream) => stream.send(frame),
            None => self.session.send(frame),
        }
    }

    /// After the answer is sent, progress and logs tied to this call are dropped.
    pub(crate) fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }
}

/// The context of one tool call: progress, logging, cancellation, the client's identity, and
/// requests back to the client (sampling, elicitation, roots). Cheap to clone.
#[derive(Clone)]
pub struct Context {
    call: Arc<CallState>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.call.request_id)
            .field("tool", &self.call.tool)
            .finish_non_exhaustive()
    }
}

/// A JSON number for `value`, written as an integer when it is one (`3`, not `3.0`), so every
/// language's server puts the same text on the wire.
pub fn json_number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() <= EXACT {
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

impl Context {
    pub(crate) fn from_state(call: Arc<CallState>) -> Self {
        Context { call }
    }

    fn session(&self) -> &SessionShared {
        &self.call.session
    }

    /// The id of the `tools/call` request.
    pub fn request_id(&self) -> &RequestId {
        self.call.request_id()
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.call.tool
    }

    /// The protocol version of this call: negotiated by the session, or named by the request
    /// (2026-07-28).
    pub fn protocol_version(&self) -> ProtocolVersion {
        if let Some(modern) = &self.call.modern {
            return modern.envelope.version;
        }
        self.session()
            .negotiated
            .get()
            .map_or(ProtocolVersion::LATEST, |n| n.version)
    }

    /// The client's `clientInfo` (from `initialize`, or this request's `_meta`).
    pub fn client_info(&self) -> Option<&Implementation> {
        if let Some(modern) = &self.call.modern {
            return modern.envelope.client_info.as_ref();
        }
        self.session().negotiated.get().map(|n| &n.client_info)
    }

    /// The capabilities the client declared (in `initialize`, or on this very request).
    pub fn client_capabilities(&self) -> &Value {
        static EMPTY: Value = Value::Null;
        if let Some(modern) = &self.call.modern {
            return &modern.envelope.client_capabilities;
        }
        self.session()
            .negotiated
            .get()
            .map_or(&EMPTY, |n| &n.client_capabilities)
    }

    /// 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key (empty in
    /// a legacy session and in a first round).
    pub fn input_responses(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match &self.call.modern {
            Some(modern) => &modern.round.responses,
            None => EMPTY.get_or_init(Map::new),
        }
    }

    /// 2026-07-28 MRTR: the answer to `key`, if the client sent one.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input_responses().get(key)
    }

    /// 2026-07-28 MRTR: the state this handler returned with its last
    /// [`InputRequired`](crate::InputRequired), verified (the engine refuses a state that was
    /// altered, expired, or minted for another request or principal).
    pub fn request_state(&self) -> Option<&str> {
        self.call
            .modern
            .as_ref()
            .and_then(|m| m.round.carried.user.as_deref())
    }

    /// The W3C trace context of this request: `traceparent`, `tracestate` and `baggage` from its
    /// `_meta` (2026-07-28 reserves them; a 2025 client may send them there too), or from the
    /// HTTP request's headers of those names.
    pub fn trace_context(&self) -> TraceContext {
        match (&self.call.modern, &self.call.trace) {
            (Some(modern), _) => modern.envelope.trace.clone(),
            (None, Some(trace)) => (**trace).clone(),
            (None, None) => TraceContext::default(),
        }
    }

    /// Whether the client asked for progress (its request carried a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.call.progress_token.is_some()
    }

    /// Reports progress. Sent only when the client asked for it, only while the call runs, and
    /// only when `progress` is greater than the last value sent; returns whether it was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        // In a task its message is the task's status message, for whoever polls it.
        if let Some(modern) = &self.call.modern
            && let (Some(task), Some(message)) = (&modern.task, message)
        {
            task.progressed(message);
        }
        let Some(token) = &self.call.progress_token else {
            return false;
        };
        if self.call.finished.load(Ordering::Acquire) || !progress.is_finite() {
            return false;
        }
        {
            let mut last = self
                .call
                .last_progress
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|last| progress <= last) {
                return false;
            }
            *last = Some(progress);
        }
        let mut params = Map::with_capacity(4);
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json_number(progress));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), json_number(total));
        }
        if let Some(message) = message
            && self.protocol_version() >= ProtocolVersion::V2025_03_26
        {
            params.insert("message".into(), Value::from(message));
        }
        self.call
            .send(notification_frame("notifications/progress", Some(&params)));
        true
    }

    /// Sends `notifications/message` if `level` is at or above the level the client set;
    /// returns whether it was sent.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) -> bool {
        self.log_as(level, None, data)
    }

    /// [`log`](Self::log) with a logger name.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl Into<Value>) -> bool {
        // 2026-07-28: only at the level this request set, and none when it set none.
        let floor = match &self.call.modern {
            Some(modern) => modern.envelope.log_level,
            None => Some(self.session().log_level()),
        };
        if floor.is_none_or(|floor| level < floor) || self.call.finished.load(Ordering::Acquire) {
            return false;
        }
        let mut params = Map::with_capacity(3);
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data.into());
        self.call
            .send(notification_frame("notifications/message", Some(&params)));
        true
    }

    /// Over Streamable HTTP with an SSE answer: closes the connection carrying this call's
    /// stream after a `retry:` hint, without ending the call. The client reconnects with
    /// `Last-Event-ID` and gets what was sent meanwhile, including the answer (SSE polling, for
    /// long calls behind proxies that cut idle connections). No effect on other transports.
    pub fn close_sse_stream(&self) {
        if let Some(stream) = &self.call.stream {
            stream.release_connection();
        }
    }

    /// Whether the call was cancelled (by the client, its deadline, or shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.call.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        self.call.cancel.cancelled().await;
    }

    /// The call's cancellation token, for work the handler hands elsewhere.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.call.cancel.token().clone()
    }

    /// Asks the client's model for a completion (`sampling/createMessage`; `params` as in the
    /// spec), waiting under the timeout rules of `options`. Fails fast if the client did not
    /// declare `sampling`.
    ///
    /// In a 2026-07-28 request nothing is sent: the answer comes from this round's
    /// `inputResponses` (or an earlier round's, carried in the sealed state); without one the
    /// question is recorded and [`Error::InputRequired`] returned. Let it end the handler: the
    /// client is asked and calls again, and this line then has its answer. Code before the
    /// question runs again each round, so put side effects after the questions.
    pub async fn sample(&self, params: Value, options: RequestOptions) -> Result<Value, Error> {
        self.ask("sampling/createMessage", params, options).await
    }

    /// Asks the user for input (`elicitation/create`, form or URL mode), waiting under the
    /// timeout rules of `options`. Fails fast if the client did not declare `elicitation` (or
    /// its `url` mode) or the protocol lacks it.
    pub async fn elicit(&self, params: Value, options: RequestOptions) -> Result<Value, Error> {
        self.ask("elicitation/create", params, options).await
    }

    /// The client's roots (`roots/list`), waiting under the timeout rules of `options`. Fails
    /// fast if the client did not declare `roots`; a malformed answer is an [`Error::Peer`].
    pub async fn list_roots(&self, options: RequestOptions) -> Result<Vec<Root>, Error> {
        let result = self.ask("roots/list", json!({}), options).await?;
        Root::list_from_result(result).map_err(Error::Peer)
    }

    /// Several questions at once, answered in order: `(method, params)` items, each
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`, each answer the spec's
    /// result for its method (for `roots/list`, `{"roots": [...]}`).
    ///
    /// In a 2026-07-28 request they make one round: every answer found, or every missing one
    /// recorded and [`Error::InputRequired`], so the client is asked all of them together. In a
    /// legacy session they are sent one after the other (a user sees one question at a time).
    /// Every item is checked before anything is asked: an unknown method is
    /// [`Error::InvalidArgument`], an undeclared capability as for the single forms.
    pub async fn ask_all(
        &self,
        questions: Vec<(String, Value)>,
        options: RequestOptions,
    ) -> Result<Vec<Value>, Error> {
        for (method, params) in &questions {
            self.check_question(method, params)?;
        }
        let Some(modern) = &self.call.modern else {
            let mut answers = Vec::with_capacity(questions.len());
            for (method, params) in questions {
                answers.push(self.request(&method, params, options.clone()).await?);
            }
            return Ok(answers);
        };
        if let Some(task) = &modern.task {
            return Self::ask_in_task(modern, task, questions).await;
        }
        let mut answers = Vec::with_capacity(questions.len());
        let mut missing = false;
        for (method, params) in &questions {
            match modern
                .round
                .answer_or_ask(method, params)
                .map_err(Error::Peer)?
            {
                Some(answer) => answers.push(answer),
                // Keep going: every missing question joins this round.
                None => missing = true,
            }
        }
        if missing {
            Err(Error::InputRequired)
        } else {
            Ok(answers)
        }
    }

    /// One question: in a 2026-07-28 request answered from the round or recorded; in a legacy
    /// session sent and awaited.
    async fn ask(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        self.check_question(method, &params)?;
        let Some(modern) = &self.call.modern else {
            return self.request(method, params, options).await;
        };
        if let Some(task) = &modern.task {
            let answers = Self::ask_in_task(modern, task, vec![(method.to_owned(), params)]);
            return answers.await?.pop().ok_or(Error::Cancelled);
        }
        match modern.round.answer_or_ask(method, &params) {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => Err(Error::InputRequired),
            Err(invalid) => Err(Error::Peer(invalid)),
        }
    }

    /// In a call that may become a task: the answers an earlier MRTR round brought, and the
    /// rest asked through the task all together (the handler waits for `tasks/update`).
    async fn ask_in_task(
        modern: &ModernRound,
        task: &LiveTask,
        questions: Vec<(String, Value)>,
    ) -> Result<Vec<Value>, Error> {
        let mut answers = Vec::with_capacity(questions.len());
        let mut missing = Vec::new();
        for (index, (method, params)) in questions.into_iter().enumerate() {
            match modern
                .round
                .answered(&method, &params)
                .map_err(Error::Peer)?
            {
                Some(answer) => answers.push(Some(answer)),
                None => {
                    answers.push(None);
                    missing.push((index, (method, params)));
                }
            }
        }
        let (slots, asked): (Vec<_>, Vec<_>) = missing.into_iter().unzip();
        for (slot, answer) in slots.into_iter().zip(task.ask(asked).await?) {
            answers[slot] = Some(answer);
        }
        Ok(answers.into_iter().flatten().collect())
    }

    /// Whether `method` may be asked of this client: a known input request whose capability
    /// the client declared (URL-mode elicitation needs `elicitation.url`).
    fn check_question(&self, method: &str, params: &Value) -> Result<(), Error> {
        match method {
            "sampling/createMessage" => self.require("sampling"),
            "roots/list" => self.require("roots"),
            "elicitation/create" => {
                if !self.protocol_version().has_elicitation() {
                    return Err(Error::CapabilityNotSupported {
                        capability: "elicitation",
                    });
                }
                if params.get("mode").and_then(Value::as_str) == Some("url") {
                    self.require("elicitation.url")
                } else {
                    self.require("elicitation")
                }
            }
            other => Err(Error::InvalidArgument(format!(
                "{other:?} is not a question for the client: ask elicitation/create, \
                 sampling/createMessage or roots/list"
            ))),
        }
    }

    /// Sends any request to the client and waits for its answer, under the timeout rules of
    /// `options`. Ends with [`Error::Cancelled`] if this call is cancelled first (the client is
    /// told with `notifications/cancelled`).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        if self.call.modern.is_some() {
            // 2026-07-28 servers never send requests; questions go through MRTR.
            return Err(Error::NoBackChannel {
                method: method.to_owned(),
            });
        }
        let out = self.session().sender_for(self.call.stream.as_ref());
        tokio::select! {
            outcome = peer::peer_request(self.session(), &out, method, params, &options) => outcome,
            () = self.call.cancel.cancelled() => Err(Error::Cancelled),
        }
    }

    /// Fails unless the client declared `capability` (a dotted path such as
    /// `elicitation.url`); in a 2026-07-28 request the engine then answers -32021 naming it.
    fn require(&self, capability: &'static str) -> Result<(), Error> {
        let declared = capability
            .split('.')
            .try_fold(self.client_capabilities(), |caps, key| caps.get(key));
        if declared.is_some() {
            return Ok(());
        }
        if let Some(modern) = &self.call.modern {
            // The engine answers -32021 naming it, unless the handler answers cleanly anyway.
            let required = match capability.split_once('.') {
                Some((root, sub)) => json!({ root: { sub: {} } }),
                None => json!({ capability: {} }),
            };
            modern.round.raise(Signal::MissingCapability(required));
        }
        Err(Error::CapabilityNotSupported { capability })
    }
}

#[cfg(test)]
mod tests {
    use super::json_number;
    use serde_json::json;

    #[test]
    fn integral_numbers_are_integers() {
        assert_eq!(json_number(3.0).to_string(), "3");
        assert_eq!(json_number(3.75), json!(3.75));
        assert_eq!(json_number(-0.0).to_string(), "0");
        assert!(json_number(f64::NAN).is_null());
    }
}
