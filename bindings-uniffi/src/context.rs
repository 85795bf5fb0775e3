//! `CallContext`: what a handler gets besides its arguments.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolwire::host::json_text;
use toolwire::{Context, RequestOptions};

use crate::errors::{ToolwireError, invalid_json};
use crate::runtime::on_runtime;

/// The context of one request (a tool call, a resource read, a prompt, a completion):
/// progress, logging, cancellation, the client's identity, and requests back to the client
/// (sampling, elicitation, roots).
#[derive(uniffi::Object)]
pub struct CallContext {
    context: Context,
}

impl CallContext {
    pub(crate) fn new(context: Context) -> Arc<Self> {
        Arc::new(CallContext { context })
    }
}

/// Severity of a log message, least severe first (the syslog levels MCP uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl From<LogLevel> for toolwire::LogLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => toolwire::LogLevel::Debug,
            LogLevel::Info => toolwire::LogLevel::Info,
            LogLevel::Notice => toolwire::LogLevel::Notice,
            LogLevel::Warning => toolwire::LogLevel::Warning,
            LogLevel::Error => toolwire::LogLevel::Error,
            LogLevel::Critical => toolwire::LogLevel::Critical,
            LogLevel::Alert => toolwire::LogLevel::Alert,
            LogLevel::Emergency => toolwire::LogLevel::Emergency,
        }
    }
}

impl ClientInfo {
    pub(crate) fn from_core(info: &toolwire::Implementation) -> Self {
        ClientInfo {
            name: info.name.clone(),
            version: info.version.clone(),
            title: info.title.clone(),
            description: info.description.clone(),
            website_url: info.website_url.clone(),
        }
    }
}

/// The client's `clientInfo` from `initialize` (the whole object: `client_info_json`).
#[derive(Clone, Debug, uniffi::Record)]
pub struct ClientInfo {
    /// Program name.
    pub name: String,
    /// Program version.
    pub version: String,
    /// Display name.
    pub title: Option<String>,
    /// What the program is.
    pub description: Option<String>,
    /// The program's website.
    pub website_url: Option<String>,
}

/// One of the client's roots (`roots/list`).
#[derive(Clone, Debug, uniffi::Record)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    pub name: Option<String>,
    /// The root's `_meta`, as JSON text.
    pub meta_json: Option<String>,
}

impl From<toolwire::Root> for Root {
    fn from(root: toolwire::Root) -> Self {
        Root {
            uri: root.uri,
            name: root.name,
            meta_json: root.meta.map(|meta| Value::Object(meta).to_string()),
        }
    }
}

/// One question for `ask_all`: `elicitation/create`, `sampling/createMessage` or `roots/list`
/// with its params as JSON text.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Question {
    /// The request's method.
    pub method: String,
    /// Its params, as JSON text.
    pub params_json: String,
}

/// A JSON-RPC request id: a number or a string, as the client chose.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum RequestId {
    /// An integer id.
    Number {
        /// The id.
        value: i64,
    },
    /// A string id.
    Text {
        /// The id.
        value: String,
    },
}

impl From<&toolwire::RequestId> for RequestId {
    fn from(id: &toolwire::RequestId) -> Self {
        match id {
            toolwire::RequestId::Number(value) => RequestId::Number { value: *value },
            toolwire::RequestId::String(value) => RequestId::Text {
                value: value.to_string(),
            },
        }
    }
}

/// A request's W3C trace context.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct TraceContext {
    /// `traceparent`.
    pub traceparent: Option<String>,
    /// `tracestate`.
    pub tracestate: Option<String>,
    /// `baggage`.
    pub baggage: Option<String>,
}

#[uniffi::export]
impl CallContext {
    /// The id of the request (`tools/call`, `resources/read`, `prompts/get`,
    /// `completion/complete`).
    pub fn request_id(&self) -> RequestId {
        RequestId::from(self.context.request_id())
    }

    /// The name of the tool being called; for a resource read the URI read, for a prompt its
    /// name, for a completion the argument completed.
    pub fn tool_name(&self) -> String {
        self.context.tool_name().to_owned()
    }

    /// The negotiated protocol version, e.g. `2025-11-25`.
    pub fn protocol_version(&self) -> String {
        self.context.protocol_version().as_str().to_owned()
    }

    /// The client's name and version.
    pub fn client_info(&self) -> Option<ClientInfo> {
        self.context.client_info().map(ClientInfo::from_core)
    }

    /// The client's whole `clientInfo` as JSON text (icons and fields of newer revisions
    /// included), `null` before `initialize`.
    pub fn client_info_json(&self) -> String {
        serde_json::to_string(&self.context.client_info()).unwrap_or_else(|_| "null".into())
    }

    /// The capabilities the client declared, as JSON text (`null` before `initialize`).
    pub fn client_capabilities_json(&self) -> String {
        json_text(self.context.client_capabilities())
    }

    /// Whether the client renders MCP Apps views (it declared the extension with their MIME
    /// type): a tool linked to a view can answer with text alone when not.
    pub fn client_renders_apps(&self) -> bool {
        self.context.client_renders_apps()
    }

    /// JSON text of the settings the client declared for the extension `id` (this request's
    /// own in 2026-07-28, the session's before), or `null` when it did not declare it.
    pub fn client_extension_json(&self, id: String) -> Option<String> {
        self.context.client_extension(&id).map(json_text)
    }

    /// 2026-07-28 MRTR: JSON text of the client's answers to an earlier round's questions, by
    /// key (`{}` in a first round or a legacy session).
    pub fn input_responses_json(&self) -> String {
        json_text(&Value::Object(self.context.input_responses().clone()))
    }

    /// 2026-07-28 MRTR: the state this tool returned with its last `InputRequired`, verified
    /// by the engine (an altered or expired one never reaches the tool).
    pub fn request_state(&self) -> Option<String> {
        self.context.request_state().map(str::to_owned)
    }

    /// The request's W3C trace context (2026-07-28 `_meta`).
    pub fn trace_context(&self) -> TraceContext {
        let trace = self.context.trace_context();
        TraceContext {
            traceparent: trace.traceparent,
            tracestate: trace.tracestate,
            baggage: trace.baggage,
        }
    }

    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.context.wants_progress()
    }

    /// Reports progress; sent only if the client asked for it and `progress` grew. Returns
    /// whether it was sent.
    #[uniffi::method(default(total = None, message = None))]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.context.progress(progress, total, message.as_deref())
    }

    /// Sends a log message to the client if `level` is at or above the level it set. Returns
    /// whether it was sent.
    #[uniffi::method(default(logger = None))]
    pub fn log(&self, level: LogLevel, message: String, logger: Option<String>) -> bool {
        self.context
            .log_as(level.into(), logger.as_deref(), Value::String(message))
    }

    /// [`log`](Self::log) with structured data (JSON text) instead of a message.
    #[uniffi::method(default(logger = None))]
    pub fn log_json(
        &self,
        level: LogLevel,
        data_json: String,
        logger: Option<String>,
    ) -> Result<bool, ToolwireError> {
        let data: Value =
            serde_json::from_str(&data_json).map_err(|err| invalid_json("the log data", err))?;
        Ok(self.context.log_as(level.into(), logger.as_deref(), data))
    }

    /// Over Streamable HTTP with an SSE answer: closes the connection carrying this call
    /// (after a retry hint) without ending it; the client reconnects and resumes. No effect on
    /// stdio.
    pub fn close_sse_stream(&self) {
        self.context.close_sse_stream();
    }

    /// Whether the call was cancelled (by the client, its deadline, or shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.context.is_cancelled()
    }

    /// Returns when the call is cancelled.
    pub async fn cancelled(&self) {
        self.context.cancellation_token().cancelled_owned().await;
    }

    /// Asks the client's model for a completion (`sampling/createMessage`); `params_json` and
    /// the answer are JSON text as in the spec. `timeout_ms` bounds the wait (counted again
    /// from each progress notification); default: the server's.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn sample(
        &self,
        params_json: String,
        timeout_ms: Option<u64>,
    ) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        let options = request_options(timeout_ms);
        answer(on_runtime(async move { context.sample(params, options).await }).await?)
    }

    /// Asks the user for input (`elicitation/create`); JSON text in and out. `timeout_ms` as
    /// for `sample`.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn elicit(
        &self,
        params_json: String,
        timeout_ms: Option<u64>,
    ) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        let options = request_options(timeout_ms);
        answer(on_runtime(async move { context.elicit(params, options).await }).await?)
    }

    /// The client's roots (`roots/list`). `timeout_ms` as for `sample`.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn list_roots(&self, timeout_ms: Option<u64>) -> Result<Vec<Root>, ToolwireError> {
        let context = self.context.clone();
        let options = request_options(timeout_ms);
        let roots = on_runtime(async move { context.list_roots(options).await }).await??;
        Ok(roots.into_iter().map(Root::from).collect())
    }

    /// Several questions at once, their results (JSON text) in order: in a 2026-07-28 request
    /// one round that asks the client every unanswered one together, in a session one after
    /// the other. `timeout_ms` as for `sample`.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn ask_all(
        &self,
        questions: Vec<Question>,
        timeout_ms: Option<u64>,
    ) -> Result<Vec<String>, ToolwireError> {
        let questions = questions
            .into_iter()
            .map(|question| Ok((question.method, parse_params(&question.params_json)?)))
            .collect::<Result<Vec<_>, ToolwireError>>()?;
        let context = self.context.clone();
        let options = request_options(timeout_ms);
        let answers =
            on_runtime(async move { context.ask_all(questions, options).await }).await??;
        Ok(answers.iter().map(json_text).collect())
    }

    /// Sends any request to the client and returns its result as JSON text. `timeout_ms`
    /// bounds the wait (counted again from each progress notification); default: the server's.
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn request(
        &self,
        method: String,
        params_json: String,
        timeout_ms: Option<u64>,
    ) -> Result<String, ToolwireError> {
        let params = parse_params(&params_json)?;
        let context = self.context.clone();
        let options = request_options(timeout_ms);
        answer(on_runtime(async move { context.request(&method, params, options).await }).await?)
    }
}

fn request_options(timeout_ms: Option<u64>) -> RequestOptions {
    let mut options = RequestOptions::default();
    options.timeout = timeout_ms.map(Duration::from_millis);
    options
}

fn parse_params(json: &str) -> Result<Value, ToolwireError> {
    serde_json::from_str(json).map_err(|err| invalid_json("the request's params", err))
}

fn answer(outcome: Result<Value, toolwire::Error>) -> Result<String, ToolwireError> {
    outcome.map(|value| json_text(&value)).map_err(Into::into)
}
