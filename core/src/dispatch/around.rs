//! Around-style middleware: one function around each request, `around(request, next)`, the
//! shape middleware has in Python, JS, Kotlin and tower. Written once here, over the engine's
//! `before`/`after`, for Rust ([`Around`]) and for every binding ([`HostAround`]):
//!
//! - what runs before `next` decides: a [`Refusal`] answers instead, and returning without
//!   calling `next` refuses the request with -32603 (so a forgotten `next` never leaves a
//!   request waiting);
//! - `next` lets the request through and gives how it ended ([`Ended`]) once its answer is
//!   out; it is called at most once;
//! - what runs after `next` only observes: the answer is sent by then, and a failure there is
//!   logged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::oneshot;

use super::middleware::{Middleware, Outcome, RequestInfo, Verdict};
use crate::Error;
use crate::wire::ErrorObject;

/// How a request ended, as `next` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ended {
    /// What its answer was.
    pub outcome: Outcome,
    /// From the request's arrival to its answer.
    pub elapsed: Duration,
}

impl Ended {
    /// As bindings hand it to host code: [`Outcome::to_json`] and `"elapsed"` in seconds.
    pub fn to_json(&self) -> Value {
        let mut json = self.outcome.to_json();
        json["elapsed"] = serde_json::json!(self.elapsed.as_secs_f64());
        json
    }

    fn unanswered() -> Self {
        Ended {
            outcome: Outcome::Cancelled,
            elapsed: Duration::ZERO,
        }
    }
}

/// What an around middleware answers instead of letting the request through.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Refusal {
    /// This JSON-RPC error.
    Error(ErrorObject),
    /// For a `tools/call`, an `isError` result of this text, for the model to read (another
    /// method gets it as a -32603 error).
    ToolError(String),
}

impl From<Refusal> for Verdict {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Error(error) => Verdict::Refuse(error),
            Refusal::ToolError(text) => Verdict::ToolError(text),
        }
    }
}

/// How a host's around function ended, as its binding reports it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Finished {
    /// It returned.
    Returned,
    /// It raised what refuses the request (the host's protocol error or tool error).
    Refused(Refusal),
    /// It raised anything else; the text (a traceback, a stack) goes to the log.
    Failed(String),
}

impl Finished {
    /// A host's report as bindings carry it: `null` (returned), `{"refuse": {"code",
    /// "message", "data"?}}`, `{"toolError": "text"}` or `{"failed": "text"}`. A report that
    /// is none of these is a failure of its own.
    pub fn from_json(value: &Value) -> Finished {
        if value.is_null() {
            return Finished::Returned;
        }
        if let Some(text) = value.get("failed") {
            let text = text
                .as_str()
                .map_or_else(|| text.to_string(), str::to_owned);
            return Finished::Failed(text);
        }
        match Verdict::from_json(value) {
            Ok(Verdict::Refuse(error)) => Finished::Refused(Refusal::Error(error)),
            Ok(Verdict::ToolError(text)) => Finished::Refused(Refusal::ToolError(text)),
            Ok(Verdict::Continue) => Finished::Returned,
            Err(why) => Finished::Failed(format!("its binding reported wrongly: {why}")),
        }
    }
}

/// A middleware around each request, in Rust.
///
/// ```
/// use toolwire::middleware::{Around, Next, Refusal, RequestInfo};
/// use toolwire::ErrorObject;
///
/// struct StaffOnly;
///
/// #[async_trait::async_trait]
/// impl Around for StaffOnly {
///     async fn around(&self, request: RequestInfo, next: Next) -> Result<(), Refusal> {
///         if request.principal.as_deref() != Some("staff") {
///             return Err(Refusal::Error(ErrorObject::new(
///                 toolwire::ErrorCode(-32001),
///                 "Forbidden".to_owned(),
///             )));
///         }
///         let ended = next.run().await;
///         tracing::info!(method = %request.method, outcome = ?ended.outcome, "audited");
///         Ok(())
///     }
/// }
/// ```
#[async_trait]
pub trait Around: Send + Sync + 'static {
    /// Runs around one request: `next.run()` has it handled and returns how it ended.
    /// Returning without running `next` refuses the request with -32603; a panic does too.
    async fn around(&self, request: RequestInfo, next: Next) -> Result<(), Refusal>;
}

/// The rest of the chain for one request (see [`Around`]).
pub struct Next {
    call: AroundCall,
}

impl Next {
    /// Lets the request through; returns how it ended once its answer is out (or
    /// [`Outcome::Cancelled`] when it never is: the client cancelled it first).
    pub async fn run(self) -> Ended {
        let (heard, ended) = oneshot::channel();
        let listening = self.call.next(Box::new(move |ended| {
            let _ = heard.send(ended);
        }));
        if listening.is_err() {
            return Ended::unanswered();
        }
        ended.await.unwrap_or_else(|_| Ended::unanswered())
    }
}

/// A binding's around middleware: `start` hands one request to the host's function and
/// returns without waiting for it; the function reports through the [`AroundCall`] it gets
/// (`next` when it calls its `next`, `finish` when it ends), from any thread.
pub trait HostAround: Send + Sync + 'static {
    /// Starts the host's function for `request`.
    fn start(&self, request: &RequestInfo, call: AroundCall);

    /// The request was given up before the function decided (the client cancelled it, its
    /// session ended, or it was refused while waiting: the server too busy): a host may stop
    /// the function. A `next` after this hears how the request ended.
    fn cancelled(&self, request: &RequestInfo) {
        let _ = request;
    }
}

impl<T: HostAround + ?Sized> HostAround for Arc<T> {
    fn start(&self, request: &RequestInfo, call: AroundCall) {
        (**self).start(request, call);
    }

    fn cancelled(&self, request: &RequestInfo) {
        (**self).cancelled(request);
    }
}

#[async_trait]
impl<T: Around + ?Sized> Around for Arc<T> {
    async fn around(&self, request: RequestInfo, next: Next) -> Result<(), Refusal> {
        (**self).around(request, next).await
    }
}

/// Hears how a request ended, on the thread that sent its answer: keep it short.
pub type OnEnded = Box<dyn FnOnce(Ended) + Send>;

/// One request's way through an around middleware: the host's function reports here.
#[derive(Clone)]
pub struct AroundCall {
    shared: Arc<CallShared>,
}

struct CallShared {
    /// Until the verdict is out: `before` waits for it.
    decide: Mutex<Option<oneshot::Sender<Verdict>>>,
    entered: AtomicBool,
    ending: Arc<Ending>,
    names: Arc<Names>,
}

/// How the middleware and its `next` are called in messages: "middleware audit", "next()".
struct Names {
    label: String,
    next: String,
}

impl AroundCall {
    /// The host's function called its `next`: the request goes on, and `on_ended` hears how
    /// it ended (cancelled, when it was given up first). `Err` when `next` was called before
    /// for this request, or after the function had ended.
    pub fn next(&self, on_ended: OnEnded) -> Result<(), Error> {
        let names = &self.shared.names;
        let mut decide = self.lock_decide();
        if self.shared.entered.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument(format!(
                "{} called {} more than once",
                names.label, names.next
            )));
        }
        // Taken by `finish`: the function has ended (and its verdict is out).
        let Some(sender) = decide.take() else {
            return Err(Error::InvalidArgument(format!(
                "{} was called after the {} had returned",
                names.next, names.label
            )));
        };
        self.shared.entered.store(true, Ordering::Release);
        drop(decide);
        // Listening before the verdict is out: the answer may come at once. A request given
        // up meanwhile (nobody hears the verdict) ends as cancelled, and `on_ended` hears so.
        self.shared.ending.listen(on_ended);
        let _ = sender.send(Verdict::Continue);
        Ok(())
    }

    /// The host's function ended. Before its `next`, this decides: a refusal answers, a
    /// return without `next` or a failure refuses with -32603. After it, a failure is logged.
    pub fn finish(&self, finished: Finished) {
        let names = &self.shared.names;
        // A request given up meanwhile has no verdict to hear.
        let decide = self.lock_decide().take().filter(|d| !d.is_closed());
        let Some(decide) = decide else {
            if self.shared.entered.load(Ordering::Acquire) {
                match finished {
                    Finished::Returned => {}
                    Finished::Refused(_) => tracing::warn!(
                        "{} refused after {}: the answer was already sent",
                        names.label,
                        names.next
                    ),
                    Finished::Failed(why) => tracing::error!(
                        "{} failed after {} (the answer was already sent): {why}",
                        names.label,
                        names.next
                    ),
                }
            }
            return;
        };
        let verdict = match finished {
            Finished::Refused(refusal) => refusal.into(),
            Finished::Returned => {
                tracing::warn!(
                    "{} returned without calling {}: the request is refused",
                    names.label,
                    names.next
                );
                internal(format!(
                    "{} returned without calling {}",
                    names.label, names.next
                ))
            }
            Finished::Failed(why) => {
                tracing::error!("{} failed: the request is refused: {why}", names.label);
                internal(format!("{} failed", names.label))
            }
        };
        let _ = decide.send(verdict);
    }

    /// [`finish`](Self::finish) with a host's report as JSON ([`Finished::from_json`]).
    pub fn finish_json(&self, report: &Value) {
        self.finish(Finished::from_json(report));
    }

    /// Whether the request was given up before the function decided (the client cancelled
    /// it): a host may stop its function then.
    pub fn is_cancelled(&self) -> bool {
        self.lock_decide()
            .as_ref()
            .is_some_and(oneshot::Sender::is_closed)
    }

    fn lock_decide(&self) -> std::sync::MutexGuard<'_, Option<oneshot::Sender<Verdict>>> {
        self.shared.decide.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn internal(message: String) -> Verdict {
    Verdict::Refuse(ErrorObject::internal(format!("Internal error: {message}")))
}

/// Where a request's end goes: the `next` that waits for it, or kept until `next` listens.
#[derive(Default)]
struct Ending {
    state: Mutex<EndingState>,
}

#[derive(Default)]
enum EndingState {
    #[default]
    Open,
    Listening(OnEnded),
    Ended(Ended),
    Delivered,
}

impl Ending {
    fn listen(&self, on_ended: OnEnded) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *state, EndingState::Delivered) {
            EndingState::Ended(ended) => {
                drop(state);
                on_ended(ended);
            }
            EndingState::Open => *state = EndingState::Listening(on_ended),
            other => *state = other,
        }
    }

    fn end(&self, ended: Ended) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *state, EndingState::Delivered) {
            EndingState::Listening(on_ended) => {
                drop(state);
                // A host's listener that panics must not take the answer's thread with it.
                let heard = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    on_ended(ended);
                }));
                if heard.is_err() {
                    tracing::error!("an around middleware's listener panicked");
                }
            }
            EndingState::Open => *state = EndingState::Ended(ended),
            other => *state = other,
        }
    }
}

/// An around middleware as the engine runs it: a `before` that starts the function and waits
/// for its verdict, an `after` that hands the end to its `next`.
pub struct AroundMiddleware {
    host: Arc<dyn HostAround>,
    names: Arc<Names>,
    /// Requests past `before`, by sequence, until `after` hears how they ended: more than one
    /// when the same middleware is in the chain twice (each `after` takes one).
    waiting: Mutex<HashMap<u64, Vec<Arc<Ending>>>>,
}

impl AroundMiddleware {
    /// `host`'s function as a middleware; `label` names it in refusals and logs ("middleware
    /// audit"), `next_name` names its `next` as its language calls it ("call_next()").
    pub fn new(
        host: impl HostAround,
        label: impl Into<String>,
        next_name: impl Into<String>,
    ) -> Self {
        AroundMiddleware {
            host: crate::dispatch::server::share(host, |h| Arc::new(h)),
            names: Arc::new(Names {
                label: label.into(),
                next: next_name.into(),
            }),
            waiting: Mutex::default(),
        }
    }

    /// A Rust [`Around`] as a middleware, named `name` in refusals and logs.
    pub fn rust(around: impl Around, name: &str) -> Self {
        AroundMiddleware::new(
            RustAround {
                around: Arc::new(around),
                deciding: Arc::default(),
            },
            format!("middleware {name}"),
            "next",
        )
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Arc<Ending>>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Middleware for AroundMiddleware {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        let ending = Arc::new(Ending::default());
        self.waiting()
            .entry(request.sequence)
            .or_default()
            .push(ending.clone());
        let (decide, decided) = oneshot::channel();
        let call = AroundCall {
            shared: Arc::new(CallShared {
                decide: Mutex::new(Some(decide)),
                entered: AtomicBool::new(false),
                ending,
                names: self.names.clone(),
            }),
        };
        // Weak: a function that drops its call without deciding must end the wait below.
        let watched = Arc::downgrade(&call.shared);
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.host.start(request, call);
        }));
        if started.is_err() {
            tracing::error!("{} panicked as it started", self.names.label);
            return internal(format!("{} failed", self.names.label));
        }
        // Dropped before the verdict (the request was given up): the host hears it.
        let abandoned = Abandoned {
            host: &*self.host,
            request,
            call: watched,
            armed: true,
        };
        // Every `AroundCall` gone with no verdict: the function can no longer decide.
        let verdict = decided
            .await
            .unwrap_or_else(|_| internal(format!("{} never decided", self.names.label)));
        abandoned.disarm();
        verdict
    }

    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        let ending = {
            let mut waiting = self.waiting();
            let ending = waiting.get_mut(&request.sequence).and_then(Vec::pop);
            if waiting
                .get(&request.sequence)
                .is_some_and(|left| left.is_empty())
            {
                waiting.remove(&request.sequence);
            }
            ending
        };
        if let Some(ending) = ending {
            ending.end(Ended {
                outcome: outcome.clone(),
                elapsed,
            });
        }
    }
}

/// Tells the host when `before` is dropped while it waits for the function's verdict.
struct Abandoned<'a> {
    host: &'a dyn HostAround,
    request: &'a RequestInfo,
    call: std::sync::Weak<CallShared>,
    armed: bool,
}

impl Abandoned<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        // A function past its `next` has decided: the request goes on without it.
        let entered = self
            .call
            .upgrade()
            .is_some_and(|call| call.entered.load(Ordering::Acquire));
        if self.armed && !entered {
            self.host.cancelled(self.request);
        }
    }
}

/// A Rust [`Around`], run as its own task for each request; a request given up before it
/// decided aborts its task.
struct RustAround<A> {
    around: Arc<A>,
    deciding: Arc<Mutex<HashMap<u64, tokio::task::AbortHandle>>>,
}

impl<A: Around> HostAround for RustAround<A> {
    fn start(&self, request: &RequestInfo, call: AroundCall) {
        let around = self.around.clone();
        let sequence = request.sequence;
        let request = request.clone();
        let deciding = self.deciding.clone();
        // Held until the task is listed: it unlists itself when it ends.
        let mut listed = self.deciding.lock().unwrap_or_else(|e| e.into_inner());
        let task = tokio::spawn(async move {
            let _unlist = Unlist { deciding, sequence };
            let next = Next { call: call.clone() };
            let ran = std::panic::AssertUnwindSafe(around.around(request, next))
                .catch_unwind()
                .await;
            call.finish(match ran {
                Ok(Ok(())) => Finished::Returned,
                Ok(Err(refusal)) => Finished::Refused(refusal),
                Err(_) => Finished::Failed("it panicked".to_owned()),
            });
        });
        if !task.is_finished() {
            listed.insert(sequence, task.abort_handle());
        }
    }

    fn cancelled(&self, request: &RequestInfo) {
        let task = self
            .deciding
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.sequence);
        if let Some(task) = task {
            task.abort();
        }
    }
}

/// Takes a Rust around's task off the list when it ends (or is aborted).
struct Unlist {
    deciding: Arc<Mutex<HashMap<u64, tokio::task::AbortHandle>>>,
    sequence: u64,
}

impl Drop for Unlist {
    fn drop(&mut self) {
        self.deciding
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.sequence);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProtocolVersion;
    use crate::wire::RequestId;

    fn request() -> RequestInfo {
        RequestInfo::new(
            "tools/call",
            Some(&serde_json::json!({"name": "echo"})),
            &RequestId::Number(1),
            None,
            Some(ProtocolVersion::V2025_11_25),
        )
    }

    /// A host whose function is played by the test through the calls it keeps.
    #[derive(Default)]
    struct Scripted(Mutex<Vec<AroundCall>>, Mutex<Vec<u64>>);

    impl HostAround for Scripted {
        fn start(&self, _request: &RequestInfo, call: AroundCall) {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        }

        fn cancelled(&self, request: &RequestInfo) {
            self.1.lock().unwrap().push(request.sequence);
        }
    }

    fn scripted() -> (Arc<Scripted>, AroundMiddleware) {
        let host = Arc::new(Scripted::default());
        let middleware = AroundMiddleware::new(host.clone(), "middleware audit", "next()");
        (host, middleware)
    }

    fn refusal_message(verdict: Verdict) -> String {
        match verdict {
            Verdict::Refuse(error) => error.message.to_string(),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[tokio::test]
    async fn next_lets_the_request_through_once_and_hears_its_end() {
        let (host, middleware) = scripted();
        let request = request();
        let deciding = middleware.before(&request);
        tokio::pin!(deciding);
        assert!(deciding.as_mut().now_or_never().is_none());
        let call = host.0.lock().unwrap().pop().unwrap();
        let (heard, ended) = std::sync::mpsc::channel();
        call.next(Box::new(move |ended| heard.send(ended).unwrap()))
            .unwrap();
        assert!(matches!(deciding.await, Verdict::Continue));
        let again = call.next(Box::new(|_| {})).unwrap_err().to_string();
        assert!(
            again.contains("middleware audit called next() more than once"),
            "{again}"
        );
        middleware.after(&request, &Outcome::ToolError, Duration::from_millis(3));
        let ended = ended.recv().unwrap();
        assert_eq!(ended.outcome, Outcome::ToolError);
        assert_eq!(ended.to_json()["kind"], "toolError");
        assert!(middleware.waiting().is_empty());
        // A failure after the answer is only logged: nothing else happens.
        call.finish(Finished::Failed("late".into()));
    }

    #[tokio::test]
    async fn what_the_function_ends_with_before_next_decides() {
        let (host, middleware) = scripted();
        let cases = [
            (
                Finished::Returned,
                "Internal error: middleware audit returned without calling next()",
            ),
            (
                Finished::Failed("boom".into()),
                "Internal error: middleware audit failed",
            ),
            (
                Finished::from_json(
                    &serde_json::json!({"refuse": {"code": -32001, "message": "Forbidden"}}),
                ),
                "Forbidden",
            ),
            (
                Finished::from_json(&serde_json::json!({"nonsense": 1})),
                "Internal error: middleware audit failed",
            ),
        ];
        for (finished, message) in cases {
            let request = request();
            let deciding = middleware.before(&request);
            tokio::pin!(deciding);
            assert!(deciding.as_mut().now_or_never().is_none());
            let call = host.0.lock().unwrap().pop().unwrap();
            call.finish(finished);
            assert_eq!(refusal_message(deciding.await), message);
            // Too late for next: the verdict is out.
            let late = call.next(Box::new(|_| {})).unwrap_err().to_string();
            assert!(
                late.contains("after the middleware audit had returned"),
                "{late}"
            );
            middleware.after(&request, &Outcome::Refused, Duration::ZERO);
            assert!(middleware.waiting().is_empty());
        }
        let tool_error = Finished::from_json(&serde_json::json!({"toolError": "not here"}));
        let refused = request();
        let deciding = middleware.before(&refused);
        tokio::pin!(deciding);
        assert!(deciding.as_mut().now_or_never().is_none());
        host.0.lock().unwrap().pop().unwrap().finish(tool_error);
        assert!(matches!(deciding.await, Verdict::ToolError(text) if text == "not here"));
    }

    #[tokio::test]
    async fn a_function_that_drops_its_call_refuses_and_a_cancelled_request_says_so() {
        let (host, middleware) = scripted();
        let dropped = request();
        let deciding = middleware.before(&dropped);
        tokio::pin!(deciding);
        assert!(deciding.as_mut().now_or_never().is_none());
        drop(host.0.lock().unwrap().pop());
        assert_eq!(
            refusal_message(deciding.await),
            "Internal error: middleware audit never decided"
        );

        let request = request();
        let mut deciding = Box::pin(middleware.before(&request));
        assert!(deciding.as_mut().now_or_never().is_none());
        let call = host.0.lock().unwrap().pop().unwrap();
        assert!(!call.is_cancelled());
        assert!(host.1.lock().unwrap().is_empty());
        drop(deciding);
        assert!(call.is_cancelled());
        assert_eq!(*host.1.lock().unwrap(), vec![request.sequence]);
        // The engine's `after` still comes (as cancelled); a `next` then hears that at once.
        middleware.after(&request, &Outcome::Cancelled, Duration::from_millis(7));
        let (heard, ended) = std::sync::mpsc::channel();
        call.next(Box::new(move |ended| heard.send(ended).unwrap()))
            .unwrap();
        let ended = ended.try_recv().unwrap();
        assert_eq!(
            (ended.outcome, ended.elapsed),
            (Outcome::Cancelled, Duration::from_millis(7))
        );
    }

    #[tokio::test]
    async fn a_host_that_panics_as_it_starts_refuses_and_the_same_middleware_twice_hears_twice() {
        struct Panics;
        impl HostAround for Panics {
            fn start(&self, _request: &RequestInfo, _call: AroundCall) {
                panic!("a bug in the binding");
            }
        }
        let middleware = AroundMiddleware::new(Panics, "middleware broken", "next()");
        let request = request();
        assert_eq!(
            refusal_message(middleware.before(&request).await),
            "Internal error: middleware broken failed"
        );
        middleware.after(&request, &Outcome::Refused, Duration::ZERO);
        assert!(middleware.waiting().is_empty());

        // One middleware in the chain twice: each `before` gets its own end.
        let (host, middleware) = scripted();
        let request = self::request();
        for _ in 0..2 {
            let deciding = middleware.before(&request);
            tokio::pin!(deciding);
            assert!(deciding.as_mut().now_or_never().is_none());
            let call = host.0.lock().unwrap().pop().unwrap();
            let heard = host.clone();
            call.next(Box::new(move |ended| {
                heard
                    .1
                    .lock()
                    .unwrap()
                    .push(ended.elapsed.as_millis() as u64);
            }))
            .unwrap();
            assert!(matches!(deciding.await, Verdict::Continue));
        }
        middleware.after(&request, &Outcome::Result, Duration::from_millis(5));
        middleware.after(&request, &Outcome::Result, Duration::from_millis(5));
        assert_eq!(*host.1.lock().unwrap(), vec![5, 5]);
        assert!(middleware.waiting().is_empty());
    }

    #[tokio::test]
    async fn a_rust_around_given_up_before_it_decides_is_aborted() {
        struct Waits(tokio::sync::mpsc::UnboundedSender<&'static str>);
        struct Dropped(tokio::sync::mpsc::UnboundedSender<&'static str>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                let _ = self.0.send("dropped");
            }
        }
        #[async_trait]
        impl Around for Waits {
            async fn around(&self, _request: RequestInfo, _next: Next) -> Result<(), Refusal> {
                let _dropped = Dropped(self.0.clone());
                let _ = self.0.send("started");
                std::future::pending::<()>().await;
                Ok(())
            }
        }
        let (events, mut heard) = tokio::sync::mpsc::unbounded_channel();
        let middleware = AroundMiddleware::rust(Waits(events), "waits");
        let request = request();
        let mut deciding = Box::pin(middleware.before(&request));
        assert!(deciding.as_mut().now_or_never().is_none());
        assert_eq!(heard.recv().await, Some("started"));
        drop(deciding);
        assert_eq!(heard.recv().await, Some("dropped"));
        middleware.after(&request, &Outcome::Cancelled, Duration::ZERO);
        assert!(middleware.waiting().is_empty());
    }

    struct Gate;

    #[async_trait]
    impl Around for Gate {
        async fn around(&self, request: RequestInfo, next: Next) -> Result<(), Refusal> {
            if request.name.as_deref() == Some("wipe") {
                return Err(Refusal::ToolError("not allowed".into()));
            }
            if request.name.as_deref() == Some("forget") {
                return Ok(());
            }
            if request.name.as_deref() == Some("panic") {
                panic!("a bug in the rule");
            }
            let ended = next.run().await;
            assert_eq!(ended.outcome, Outcome::Result);
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_rust_around_decides_and_observes() {
        let middleware = AroundMiddleware::rust(Gate, "gate");
        let named = |name: &str| {
            RequestInfo::new(
                "tools/call",
                Some(&serde_json::json!({"name": name})),
                &RequestId::Number(2),
                None,
                None,
            )
        };
        assert!(matches!(
            middleware.before(&named("wipe")).await,
            Verdict::ToolError(text) if text == "not allowed"
        ));
        assert_eq!(
            refusal_message(middleware.before(&named("forget")).await),
            "Internal error: middleware gate returned without calling next"
        );
        assert_eq!(
            refusal_message(middleware.before(&named("panic")).await),
            "Internal error: middleware gate failed"
        );
        let echo = named("echo");
        assert!(matches!(middleware.before(&echo).await, Verdict::Continue));
        middleware.after(&echo, &Outcome::Result, Duration::from_millis(1));
    }
}
