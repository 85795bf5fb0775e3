//! One call's state as dispatch runs it, and the [`CallScope`] a handler's
//! [`Context`](crate::Context) reads it through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::modern::{ModernRound, Signal};
use super::peer;
use super::{RequestStream, SessionShared};
use crate::cancel::CallCancel;
use crate::error::Error;
use crate::handler::context::{CallScope, RequestOptions};
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, TraceContext};
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

impl CallState {
    fn session(&self) -> &SessionShared {
        &self.session
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

    /// Fails unless the client declared `capability` (a dotted path such as
    /// `elicitation.url`); in a 2026-07-28 request the engine then answers -32021 naming it.
    fn require(&self, capability: &'static str) -> Result<(), Error> {
        let declared = capability
            .split('.')
            .try_fold(self.client_capabilities(), |caps, key| caps.get(key));
        if declared.is_some() {
            return Ok(());
        }
        if let Some(modern) = &self.modern {
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

#[async_trait]
impl CallScope for CallState {
    fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    fn tool_name(&self) -> &str {
        &self.tool
    }

    fn protocol_version(&self) -> ProtocolVersion {
        if let Some(modern) = &self.modern {
            return modern.envelope.version;
        }
        self.session()
            .negotiated
            .get()
            .map_or(ProtocolVersion::LATEST, |n| n.version)
    }

    fn client_info(&self) -> Option<&Implementation> {
        if let Some(modern) = &self.modern {
            return modern.envelope.client_info.as_ref();
        }
        self.session().negotiated.get().map(|n| &n.client_info)
    }

    fn client_capabilities(&self) -> &Value {
        static EMPTY: Value = Value::Null;
        if let Some(modern) = &self.modern {
            return &modern.envelope.client_capabilities;
        }
        self.session()
            .negotiated
            .get()
            .map_or(&EMPTY, |n| &n.client_capabilities)
    }

    fn input_responses(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match &self.modern {
            Some(modern) => &modern.round.responses,
            None => EMPTY.get_or_init(Map::new),
        }
    }

    fn request_state(&self) -> Option<&str> {
        self.modern
            .as_ref()
            .and_then(|m| m.round.carried.user.as_deref())
    }

    fn trace_context(&self) -> TraceContext {
        match (&self.modern, &self.trace) {
            (Some(modern), _) => modern.envelope.trace.clone(),
            (None, Some(trace)) => (**trace).clone(),
            (None, None) => TraceContext::default(),
        }
    }

    fn wants_progress(&self) -> bool {
        self.progress_token.is_some()
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        // In a task its message is the task's status message, for whoever polls it.
        if let Some(modern) = &self.modern
            && let (Some(task), Some(message)) = (&modern.task, message)
        {
            task.progressed(message);
        }
        let Some(token) = &self.progress_token else {
            return false;
        };
        if self.finished.load(Ordering::Acquire) || !progress.is_finite() {
            return false;
        }
        {
            let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
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
        self.send(notification_frame("notifications/progress", Some(&params)));
        true
    }

    fn log_level(&self) -> Option<LogLevel> {
        // 2026-07-28: only at the level this request set, and none when it set none.
        match &self.modern {
            Some(modern) => modern.envelope.log_level,
            None => Some(self.session().log_level()),
        }
    }

    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        let floor = self.log_level();
        if floor.is_none_or(|floor| level < floor) || self.finished.load(Ordering::Acquire) {
            return false;
        }
        let mut params = Map::with_capacity(3);
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data);
        self.send(notification_frame("notifications/message", Some(&params)));
        true
    }

    fn close_sse_stream(&self) {
        if let Some(stream) = &self.stream {
            stream.release_connection();
        }
    }

    fn cancel(&self) -> &CallCancel {
        &self.cancel
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
        let Some(modern) = &self.modern else {
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

    async fn ask_all(
        &self,
        questions: Vec<(String, Value)>,
        options: RequestOptions,
    ) -> Result<Vec<Value>, Error> {
        for (method, params) in &questions {
            self.check_question(method, params)?;
        }
        let Some(modern) = &self.modern else {
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

    async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        if self.modern.is_some() {
            // 2026-07-28 servers never send requests; questions go through MRTR.
            return Err(Error::NoBackChannel {
                method: method.to_owned(),
            });
        }
        let out = self.session().sender_for(self.stream.as_ref());
        tokio::select! {
            outcome = peer::peer_request(self.session(), &out, method, params, &options) => outcome,
            () = self.cancel.cancelled() => Err(Error::Cancelled),
        }
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
