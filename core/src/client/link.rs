//! The wire under a [`Client`](super::Client): request ids and their waiting callers, the
//! reader of the session's outbound frames, and the answers to the server's own requests.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use super::wire::{Frames, Wire};
use super::{Answerer, Progress};
use crate::wire::{ErrorCode, ErrorObject};

/// The notifications a client keeps (the oldest go first past it): a client that runs for
/// long is not a leak.
pub(super) const NOTIFICATIONS_KEPT: usize = 10_000;

/// What a response frame carried: its `result`, or its `error`.
pub(super) type Answer = Result<Value, ErrorObject>;

/// The error a request still waiting gets when the session ends (-32000, the code the
/// official SDKs give a closed connection).
pub(super) fn closed_error() -> ErrorObject {
    ErrorObject::new(ErrorCode(-32000), "the session closed before the answer")
}

/// Who answers the server's questions: the host's callbacks for elicitation and sampling,
/// the fixed roots, `ping`.
pub(super) struct Answers {
    pub(super) answerer: Option<Arc<dyn Answerer>>,
    pub(super) elicitation: bool,
    pub(super) sampling: bool,
    pub(super) roots: Option<Value>,
}

impl Answers {
    /// What this client answers to `method` (a server→client request, or one of a 2026-07-28
    /// `input_required` result's questions).
    pub(super) async fn answer(&self, method: &str, params: Value) -> Answer {
        let asks_host = match method {
            "elicitation/create" => self.elicitation,
            "sampling/createMessage" => self.sampling,
            "roots/list" => {
                if let Some(roots) = &self.roots {
                    return Ok(json!({ "roots": roots }));
                }
                false
            }
            "ping" => return Ok(json!({})),
            _ => false,
        };
        match (&self.answerer, asks_host) {
            (Some(answerer), true) => answerer.answer(method.to_owned(), params).await,
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }
}

/// Work for the task that calls the progress callbacks, in the order it was queued.
pub(super) enum Heard {
    /// A progress notification's params, for its request's callback.
    Progress(Progress, Value),
    /// Answered once everything queued before it has run.
    Flushed(oneshot::Sender<()>),
}

/// Calls the progress callbacks, off the reader: a callback that takes long (or blocks) never
/// keeps the client from reading its answers. One that panics is reported, and the rest run.
pub(super) async fn hear(mut heard: mpsc::UnboundedReceiver<Heard>) {
    while let Some(job) = heard.recv().await {
        match job {
            Heard::Progress(progress, params) => {
                let called = std::panic::catch_unwind(AssertUnwindSafe(|| progress(&params)));
                if called.is_err() {
                    tracing::warn!("a progress callback of the client panicked");
                }
            }
            Heard::Flushed(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// Called with each notification's method and params as it arrives (on the reader: keep it
/// short).
pub type Listener = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// The client's half of one session: what it sent and waits for, what it was told.
pub(super) struct Link {
    wire: Wire,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    /// Requests whose own answerer answers the server's questions about them.
    askers: Mutex<HashMap<u64, Arc<dyn Answerer>>>,
    listeners: Mutex<Vec<Listener>>,
    notifications_kept: usize,
    progress: Mutex<HashMap<String, Progress>>,
    notifications: Mutex<VecDeque<Value>>,
    /// Set when the outbound stream ended: nothing more will be answered.
    ended: AtomicBool,
    pub(super) answers: Answers,
    heard: mpsc::UnboundedSender<Heard>,
}

impl Link {
    pub(super) fn new(
        wire: Wire,
        notifications_kept: usize,
        answers: Answers,
        heard: mpsc::UnboundedSender<Heard>,
    ) -> Arc<Self> {
        Arc::new(Link {
            wire,
            next_id: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            askers: Mutex::new(HashMap::new()),
            listeners: Mutex::new(Vec::new()),
            notifications_kept,
            progress: Mutex::new(HashMap::new()),
            notifications: Mutex::new(VecDeque::new()),
            ended: AtomicBool::new(false),
            answers,
            heard,
        })
    }

    pub(super) fn wire(&self) -> &Wire {
        &self.wire
    }

    /// Whether the connection ended: nothing sent now is answered.
    pub(super) fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    pub(super) fn listen(&self, listener: Listener) {
        lock(&self.listeners).push(listener);
    }

    /// `answerer` answers what the server asks about request `id`, until `unask`.
    pub(super) fn ask_with(&self, id: u64, answerer: Arc<dyn Answerer>) {
        lock(&self.askers).insert(id, answerer);
    }

    pub(super) fn unask(&self, id: u64) {
        lock(&self.askers).remove(&id);
    }

    pub(super) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `message` (a request of ours when `request` is its id); `false` when the wire
    /// would not take it.
    pub(super) fn send(&self, message: &Value, request: Option<u64>) -> bool {
        self.wire.send(message, request)
    }

    /// Registers `id` as waiting; `None` once the session ended (no answer can come).
    pub(super) fn wait_for(&self, id: u64) -> Option<oneshot::Receiver<Answer>> {
        let (tx, rx) = oneshot::channel();
        let mut waiting = lock(&self.waiting);
        // Checked under the lock `end` takes: an id registered after it drained would wait
        // for ever.
        if self.ended.load(Ordering::Acquire) {
            return None;
        }
        waiting.insert(id, tx);
        Some(rx)
    }

    /// Stops waiting for `id` (its caller gave up); whether it was still waiting.
    pub(super) fn forget(&self, id: u64) -> bool {
        lock(&self.waiting).remove(&id).is_some()
    }

    pub(super) fn watch_progress(&self, token: String, progress: Progress) {
        lock(&self.progress).insert(token, progress);
    }

    pub(super) fn unwatch_progress(&self, token: &str) {
        lock(&self.progress).remove(token);
    }

    pub(super) fn notifications(&self) -> Vec<Value> {
        lock(&self.notifications).iter().cloned().collect()
    }

    /// Returns once the progress callbacks heard so far have run: a request's result comes
    /// after its progress.
    pub(super) async fn progress_heard(&self) {
        let (done, flushed) = oneshot::channel();
        if self.heard.send(Heard::Flushed(done)).is_ok() {
            let _ = flushed.await;
        }
    }

    /// Reads the session's outbound frames until the stream ends, then fails whoever still
    /// waits.
    pub(super) async fn read(self: Arc<Self>, mut frames: Frames) {
        // Whoever waits is failed however the reading ends (a panic in it too).
        let _ending = EndOnDrop(self.clone());
        while let Some(incoming) = frames.next().await {
            let about = incoming.about;
            match serde_json::from_str::<Value>(&incoming.frame) {
                // A batch answer: each member on its own.
                Ok(Value::Array(members)) => members.into_iter().for_each(|m| self.take(m, about)),
                Ok(message) => self.take(message, about),
                Err(err) => tracing::warn!(%err, "the server sent a frame that is not JSON"),
            }
        }
    }

    fn take(self: &Arc<Self>, message: Value, about: Option<u64>) {
        let Value::Object(mut message) = message else {
            tracing::warn!("the server sent a frame that is not a JSON object");
            return;
        };
        let Some(Value::String(method)) = message.remove("method") else {
            return self.settle(message);
        };
        let params = message.remove("params").unwrap_or_else(|| json!({}));
        match message.remove("id") {
            Some(id) => {
                // Answered on its own task: a question may take the host long, and the reader
                // must go on (the server may ask more, or cancel this one).
                let link = self.clone();
                tokio::spawn(async move { link.reply(id, &method, params, about).await });
            }
            None => self.notified(method, params, about),
        }
    }

    fn settle(&self, mut response: Map<String, Value>) {
        let Some(id) = response.get("id").and_then(Value::as_u64) else {
            tracing::warn!("the server answered a request this client did not send");
            return;
        };
        let Some(waiter) = lock(&self.waiting).remove(&id) else {
            return; // given up on (timed out, cancelled)
        };
        let answer = match response.remove("error") {
            Some(error) => Err(serde_json::from_value(error).unwrap_or_else(|err| {
                ErrorObject::internal(format!("the server sent an unreadable error: {err}"))
            })),
            None => Ok(response.remove("result").unwrap_or(Value::Null)),
        };
        let _ = waiter.send(answer);
    }

    /// Who answers a question: the asker of the request the transport says it is about, or
    /// the only request with an asker (stdio and in-process sessions do not say which request
    /// a question belongs to), or the client's own answers when no request has an asker.
    /// `Err` when requests of several askers are in flight and the question names none:
    /// guessing could show one caller's question to another.
    pub(super) fn asker(&self, about: Option<u64>) -> Result<Option<Arc<dyn Answerer>>, usize> {
        let askers = lock(&self.askers);
        if let Some(asker) = about.and_then(|id| askers.get(&id)) {
            return Ok(Some(asker.clone()));
        }
        match askers.len() {
            0 => Ok(None),
            1 => Ok(askers.values().next().cloned()),
            several => Err(several),
        }
    }

    /// Who hears a log message: the asker of the request it is about. Where the transport
    /// names no request (stdio, in-process), the only request with an asker; where it does
    /// name them, a log about none (a session's, a listen stream's) is no asker's.
    fn log_asker(&self, about: Option<u64>) -> Option<Arc<dyn Answerer>> {
        match about {
            Some(id) => lock(&self.askers).get(&id).cloned(),
            None if self.wire().names_requests() => None,
            None => self.asker(None).ok().flatten(),
        }
    }

    async fn reply(&self, id: Value, method: &str, params: Value, about: Option<u64>) {
        let asker = if method == "ping" {
            Ok(None)
        } else {
            self.asker(about)
        };
        let answer = match asker {
            Ok(None) => self.answers.answer(method, params).await,
            Ok(Some(asker)) => asker.answer(method.to_owned(), params).await,
            Err(several) => Err(ErrorObject::new(
                ErrorCode(-32603),
                format!(
                    "{method} cannot be answered: {several} requests are in flight and this \
                     transport does not say which one it is about"
                ),
            )),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        if !self.ended.load(Ordering::Acquire) {
            self.send(&reply, None);
        }
    }

    fn notified(&self, method: String, params: Value, about: Option<u64>) {
        if method == "notifications/message"
            && let Some(asker) = self.log_asker(about)
        {
            asker.logged(&params);
        }
        let progress = (method == "notifications/progress")
            .then(|| {
                let token = token_text(params.get("progressToken")?)?;
                lock(&self.progress).get(&token).cloned()
            })
            .flatten();
        let notification = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let heard =
            progress.map(|progress| Heard::Progress(progress, notification["params"].clone()));
        // Kept first: a listener or progress callback that reads the notifications sees its
        // own.
        let listeners = lock(&self.listeners).clone();
        let mut told = Some(notification);
        if self.notifications_kept > 0 {
            // Copied only when a listener needs it too.
            let keeping = if listeners.is_empty() {
                told.take()
            } else {
                told.clone()
            };
            let mut kept = lock(&self.notifications);
            if kept.len() >= self.notifications_kept {
                kept.pop_front();
            }
            kept.extend(keeping);
        }
        if let Some(told) = told
            && let (Some(method), Some(params)) = (told["method"].as_str(), told.get("params"))
        {
            for listener in listeners {
                listener(method, params);
            }
        }
        if let Some(heard) = heard {
            let _ = self.heard.send(heard);
        }
    }

    fn end(&self) {
        let waiting: Vec<_> = {
            let mut waiting = lock(&self.waiting);
            self.ended.store(true, Ordering::Release);
            waiting.drain().map(|(_, waiter)| waiter).collect()
        };
        for waiter in waiting {
            let _ = waiter.send(Err(closed_error()));
        }
    }
}

struct EndOnDrop(Arc<Link>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A progress token as the key it is kept under (a string, or a number's text).
pub(super) fn token_text(token: &Value) -> Option<String> {
    match token {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Server;

    fn answerer() -> Arc<dyn Answerer> {
        Arc::new(
            |_method: String, _params: Value| -> futures_util::future::BoxFuture<'static, Answer> {
                Box::pin(async { Ok(json!({})) })
            },
        )
    }

    #[tokio::test]
    async fn a_question_naming_no_request_goes_to_the_only_asker_or_to_none() {
        let server = Server::builder("t", "1").build().expect("a server");
        let (session, _outbound) = server.session().expect("a runtime");
        let (heard, _hear) = mpsc::unbounded_channel();
        let answers = Answers {
            answerer: None,
            elicitation: false,
            sampling: false,
            roots: None,
        };
        let link = Link::new(Wire::Local(session), NOTIFICATIONS_KEPT, answers, heard);
        assert!(matches!(link.asker(None), Ok(None)));
        link.ask_with(7, answerer());
        assert!(matches!(link.asker(None), Ok(Some(_))));
        link.ask_with(9, answerer());
        // Two callers, and the question names neither: guessing could show it to the wrong one.
        assert!(matches!(link.asker(None), Err(2)));
        assert!(matches!(link.asker(Some(9)), Ok(Some(_))));
        link.unask(7);
        assert!(matches!(link.asker(None), Ok(Some(_))));
    }

    #[tokio::test]
    async fn the_oldest_notifications_go_first_past_the_bound() {
        let server = Server::builder("t", "1").build().expect("a server");
        let (session, _outbound) = server.session().expect("a runtime");
        let (heard, _hear) = mpsc::unbounded_channel();
        let link = Link::new(
            Wire::Local(session),
            NOTIFICATIONS_KEPT,
            Answers {
                answerer: None,
                elicitation: false,
                sampling: false,
                roots: None,
            },
            heard,
        );
        for n in 0..NOTIFICATIONS_KEPT + 5 {
            link.notified("notifications/message".into(), json!({"n": n}), None);
        }
        let kept = link.notifications();
        assert_eq!(kept.len(), NOTIFICATIONS_KEPT);
        assert_eq!(kept[0]["params"]["n"], 5);
        assert_eq!(
            kept[NOTIFICATIONS_KEPT - 1]["params"]["n"],
            NOTIFICATIONS_KEPT + 4
        );
    }
}
