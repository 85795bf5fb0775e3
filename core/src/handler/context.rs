//! What a handler gets besides its arguments: a [`Context`], over the [`CallScope`] that
//! dispatch implements for each call it runs (so handlers and catalogs need nothing above them).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::cancel::CallCancel;
use crate::error::Error;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, Root, TraceContext};
use crate::wire::RequestId;

/// Per-request overrides for a server→client request.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Wait this long for an answer, counted again from each progress notification
    /// (default: the server's `client_request_timeout`).
    pub timeout: Option<Duration>,
    /// Never wait longer than this in total (default: `client_request_max_timeout`).
    pub max_timeout: Option<Duration>,
}

impl RequestOptions {
    /// Options with the given timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        RequestOptions {
            timeout: Some(timeout),
            max_timeout: None,
        }
    }
}

/// One call as the engine runs it: what a [`Context`] reads and does. Dispatch implements it.
#[async_trait]
pub(crate) trait CallScope: Send + Sync {
    fn request_id(&self) -> &RequestId;
    fn tool_name(&self) -> &str;
    fn protocol_version(&self) -> ProtocolVersion;
    fn client_info(&self) -> Option<&Implementation>;
    fn client_capabilities(&self) -> &Value;
    fn input_responses(&self) -> &Map<String, Value>;
    fn request_state(&self) -> Option<&str>;
    fn trace_context(&self) -> TraceContext;
    fn wants_progress(&self) -> bool;
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool;
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool;
    /// The least severe level a log of this call reaches the client at; `None` when none do.
    fn log_level(&self) -> Option<LogLevel>;
    fn close_sse_stream(&self);
    fn cancel(&self) -> &CallCancel;
    /// One question (elicitation, sampling, roots): asked, or answered from the round.
    async fn ask(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, Error>;
    async fn ask_all(
        &self,
        questions: Vec<(String, Value)>,
        options: RequestOptions,
    ) -> Result<Vec<Value>, Error>;
    async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, Error>;
}

/// The context of one tool call: progress, logging, cancellation, the client's identity, and
/// requests back to the client (sampling, elicitation, roots). Cheap to clone.
#[derive(Clone)]
pub struct Context {
    call: Arc<dyn CallScope>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", self.call.request_id())
            .field("tool", &self.call.tool_name())
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(call: Arc<dyn CallScope>) -> Self {
        Context { call }
    }

    /// The id of the `tools/call` request.
    pub fn request_id(&self) -> &RequestId {
        self.call.request_id()
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.call.tool_name()
    }

    /// The protocol version of this call: negotiated by the session, or named by the request
    /// (2026-07-28).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.call.protocol_version()
    }

    /// The client's `clientInfo` (from `initialize`, or this request's `_meta`).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.call.client_info()
    }

    /// The capabilities the client declared (in `initialize`, or on this very request).
    pub fn client_capabilities(&self) -> &Value {
        self.call.client_capabilities()
    }

    /// The settings the client declared for the extension `id` (its
    /// `capabilities.extensions[id]`: this request's own in 2026-07-28, the session's from
    /// `initialize` before), or `None` when it did not declare it.
    pub fn client_extension(&self, id: &str) -> Option<&Value> {
        self.client_capabilities().get("extensions")?.get(id)
    }

    /// Whether the client renders MCP Apps views (it declared the `io.modelcontextprotocol/ui`
    /// extension with the views' MIME type): a tool can answer with text alone when not.
    pub fn client_renders_apps(&self) -> bool {
        crate::protocol::apps::renders(self.client_capabilities())
    }

    /// 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key (empty in
    /// a legacy session and in a first round).
    pub fn input_responses(&self) -> &Map<String, Value> {
        self.call.input_responses()
    }

    /// 2026-07-28 MRTR: the answer to `key`, if the client sent one.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input_responses().get(key)
    }

    /// 2026-07-28 MRTR: the state this handler returned with its last
    /// [`InputRequired`](crate::InputRequired), verified (the engine refuses a state that was
    /// altered, expired, or minted for another request or principal).
    pub fn request_state(&self) -> Option<&str> {
        self.call.request_state()
    }

    /// The W3C trace context of this request: `traceparent`, `tracestate` and `baggage` from its
    /// `_meta` (2026-07-28 reserves them; a 2025 client may send them there too), or from the
    /// HTTP request's headers of those names.
    pub fn trace_context(&self) -> TraceContext {
        self.call.trace_context()
    }

    /// Whether the client asked for progress (its request carried a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.call.wants_progress()
    }

    /// Reports progress. Sent only when the client asked for it, only while the call runs, and
    /// only when `progress` is greater than the last value sent; returns whether it was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.call.progress(progress, total, message)
    }

    /// Sends `notifications/message` if `level` is at or above the level the client set;
    /// returns whether it was sent.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) -> bool {
        self.call.log(level, None, data.into())
    }

    /// [`log`](Self::log) with a logger name.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl Into<Value>) -> bool {
        self.call.log(level, logger, data.into())
    }

    /// The least severe level [`log`](Self::log) sends at for this call (the session's, or in
    /// 2026-07-28 the request's); `None` when nothing would be sent. A mount asks its upstream
    /// for the same.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.call.log_level()
    }

    /// Over Streamable HTTP with an SSE answer: closes the connection carrying this call's
    /// stream after a `retry:` hint, without ending the call. The client reconnects with
    /// `Last-Event-ID` and gets what was sent meanwhile, including the answer (SSE polling, for
    /// long calls behind proxies that cut idle connections). No effect on other transports.
    pub fn close_sse_stream(&self) {
        self.call.close_sse_stream();
    }

    /// Whether the call was cancelled (by the client, its deadline, or shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.call.cancel().is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        self.call.cancel().cancelled().await;
    }

    /// The call's cancellation token, for work the handler hands elsewhere.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.call.cancel().token().clone()
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
        self.call
            .ask("sampling/createMessage", params, options)
            .await
    }

    /// Asks the user for input (`elicitation/create`, form or URL mode), waiting under the
    /// timeout rules of `options`. Fails fast if the client did not declare `elicitation` (or
    /// its `url` mode) or the protocol lacks it.
    pub async fn elicit(&self, params: Value, options: RequestOptions) -> Result<Value, Error> {
        self.call.ask("elicitation/create", params, options).await
    }

    /// The client's roots (`roots/list`), waiting under the timeout rules of `options`. Fails
    /// fast if the client did not declare `roots`; a malformed answer is an [`Error::Peer`].
    pub async fn list_roots(&self, options: RequestOptions) -> Result<Vec<Root>, Error> {
        let result = self.call.ask("roots/list", json!({}), options).await?;
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
        self.call.ask_all(questions, options).await
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
        self.call.request(method, params, options).await
    }
}
