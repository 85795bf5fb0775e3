//! `Client`: core's in-process client (`toolwire::client`), what Kotlin's `dev.toolwire.testing`
//! wraps (and Swift may use as it is).
//!
//! Every request is core's: the handshake, `_meta`, correlation, paging, progress tokens, the
//! 2026-07-28 `input_required` rounds and the answers to `roots/list` and `ping`. This file
//! converts JSON text and records, runs core's futures on the engine's runtime, and hands the
//! server's elicitation and sampling questions to a foreign [`ClientAnswerer`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use toolwire::client::{self as core_client, Answerer, Progress};
use toolwire::host::json_text;
use toolwire::{ErrorCode, ErrorObject};

use crate::connection::new_session;
use crate::errors::{ToolwireError, invalid_json};
use crate::runtime::{on_runtime, on_runtime_abortable};

/// How a [`Client`] presents itself and what it answers; every field has core's default.
#[derive(Clone, Debug, Default, uniffi::Record)]
pub struct ClientOptions {
    /// The version it asks for (default `2025-11-25`): a legacy one initializes a session,
    /// `2026-07-28` sends each request stand-alone.
    #[uniffi(default = None)]
    pub protocol_version: Option<String>,
    /// Capabilities declared besides those `elicitation`, `sampling` and `roots_json` imply,
    /// as JSON text of an object (what is given here wins).
    #[uniffi(default = None)]
    pub capabilities_json: Option<String>,
    /// `clientInfo`, as JSON text (default: toolwire's).
    #[uniffi(default = None)]
    pub client_info_json: Option<String>,
    /// The answerer answers `elicitation/create` (declared as `elicitation`).
    #[uniffi(default = false)]
    pub elicitation: bool,
    /// The answerer answers `sampling/createMessage` (declared as `sampling`).
    #[uniffi(default = false)]
    pub sampling: bool,
    /// What `roots/list` returns, as JSON text of an array (declared as `roots`); none: the
    /// client has no roots.
    #[uniffi(default = None)]
    pub roots_json: Option<String>,
    /// How long a request waits for its answer before it is cancelled (default 30 s).
    #[uniffi(default = None)]
    pub request_timeout_ms: Option<u64>,
    /// How many `input_required` rounds one request may take (default 16).
    #[uniffi(default = None)]
    pub max_input_rounds: Option<u32>,
}

impl ClientOptions {
    fn into_core(self) -> Result<core_client::ClientOptions, ToolwireError> {
        let mut options = core_client::ClientOptions::default();
        if let Some(version) = self.protocol_version {
            options.protocol_version = version;
        }
        if let Some(json) = self.capabilities_json {
            options.capabilities = parse(&json, "the client's capabilities")?;
        }
        if let Some(json) = self.client_info_json {
            options.client_info = parse(&json, "the client's info")?;
        }
        options.elicitation = self.elicitation;
        options.sampling = self.sampling;
        if let Some(json) = self.roots_json {
            options.roots = Some(parse(&json, "the client's roots")?);
        }
        if let Some(ms) = self.request_timeout_ms {
            options.request_timeout = Duration::from_millis(ms);
        }
        if let Some(rounds) = self.max_input_rounds {
            options.max_input_rounds = usize::try_from(rounds).unwrap_or(usize::MAX);
        }
        Ok(options)
    }
}

/// Answers the server's questions the client declared it answers (`elicitation/create`,
/// `sampling/createMessage`), asked as requests or as 2026-07-28 input requests. Kotlin's
/// `suspend fun`, Swift's `async throws`.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ClientAnswerer: Send + Sync {
    /// The result for `method`, as JSON text of an object; `params_json` is the question's
    /// params. Throwing `ToolwireError.Rpc` (or `Protocol`) answers with that JSON-RPC error,
    /// anything else with -32603.
    async fn answer(&self, method: String, params_json: String) -> Result<String, ToolwireError>;
}

/// Hears the progress notifications of one request.
#[uniffi::export(with_foreign)]
pub trait ClientProgress: Send + Sync {
    /// One notification's `progress`, `total` and `message`, on an engine thread, in order and
    /// before the request's result (which waits for it: return promptly).
    fn heard(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ToolwireError>;
}

/// The foreign answerer, as core asks it. Let go of at `shutdown`: the foreign side's handle
/// would otherwise keep whatever its callbacks capture (the client object too) alive.
struct ForeignAnswerer(Arc<Mutex<Option<Arc<dyn ClientAnswerer>>>>);

impl Answerer for ForeignAnswerer {
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send>> {
        let foreign = lock(&self.0).clone();
        Box::pin(async move {
            let Some(foreign) = foreign else {
                return Err(ErrorObject::internal("the client was shut down"));
            };
            let text = foreign
                .answer(method, json_text(&params))
                .await
                .map_err(answer_error)?;
            serde_json::from_str(&text).map_err(|err| {
                ErrorObject::internal(format!(
                    "the test client's callback returned no JSON: {err}"
                ))
            })
        })
    }
}

/// What an answerer's error tells the server.
fn answer_error(err: ToolwireError) -> ErrorObject {
    match err {
        ToolwireError::Rpc {
            code,
            detail,
            data_json,
        }
        | ToolwireError::Protocol {
            code,
            detail,
            data_json,
        } => {
            let error = ErrorObject::new(ErrorCode(code), detail);
            match data_json.map(|json| serde_json::from_str(&json)) {
                None => error,
                Some(Ok(data)) => error.with_data(data),
                Some(Err(err)) => ErrorObject::internal(format!(
                    "the test client's callback's error data is not valid JSON: {err}"
                )),
            }
        }
        other => ErrorObject::internal(format!("the test client's callback failed: {other}")),
    }
}

fn progress_of(listener: Arc<dyn ClientProgress>) -> Progress {
    Arc::new(move |params: &Value| {
        let progress = params
            .get("progress")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let total = params.get("total").and_then(Value::as_f64);
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // A listener that throws loses only its own notification.
        if let Err(err) = listener.heard(progress, total, message) {
            tracing::warn!(%err, "a client's progress listener failed");
        }
    })
}

/// One client session with a server of this process, as a real client drives it (see
/// `Server.client`). Requests may run concurrently. A JSON-RPC error answer is
/// `ToolwireError.Rpc`; no answer in time, `ToolwireError.Timeout` (the server is told the
/// request is cancelled, as it is when the caller's coroutine or task is cancelled).
#[derive(uniffi::Object)]
pub struct Client {
    client: Arc<core_client::Client>,
    answerer: Arc<Mutex<Option<Arc<dyn ClientAnswerer>>>>,
}

impl Client {
    /// A client over a new session of `server`, its handshake done.
    pub(crate) async fn connect(
        server: &toolwire::Server,
        options: ClientOptions,
        answerer: Option<Arc<dyn ClientAnswerer>>,
    ) -> Result<Arc<Self>, ToolwireError> {
        let options = options.into_core()?;
        let (session, outbound) = new_session(server);
        let slot = Arc::new(Mutex::new(answerer));
        let answers: Arc<dyn Answerer> = Arc::new(ForeignAnswerer(slot.clone()));
        let client = on_core(async move {
            core_client::Client::over(session, outbound, options, Some(answers)).await
        })
        .await?;
        Ok(Arc::new(Client {
            client: Arc::new(client),
            answerer: slot,
        }))
    }

    /// Runs `work` with the core client on the engine's runtime.
    async fn run<T, F>(
        &self,
        work: impl FnOnce(Arc<core_client::Client>) -> F,
    ) -> Result<T, ToolwireError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, toolwire::Error>> + Send + 'static,
    {
        on_core(work(self.client.clone())).await
    }

    /// A paged list's items (all pages), as JSON text of an array.
    async fn list<F>(
        &self,
        work: impl FnOnce(Arc<core_client::Client>) -> F,
    ) -> Result<String, ToolwireError>
    where
        F: Future<Output = Result<Vec<Value>, toolwire::Error>> + Send + 'static,
    {
        let items = self.run(work).await?;
        Ok(json_text(&Value::Array(items)))
    }
}

#[uniffi::export]
impl Client {
    /// Sends `method` once (`params_json`: JSON text of an object) and returns its result as
    /// JSON text, waiting at most `timeout_ms` (default: the client's request timeout).
    #[uniffi::method(default(timeout_ms = None))]
    pub async fn request(
        &self,
        method: String,
        params_json: String,
        timeout_ms: Option<u64>,
    ) -> Result<String, ToolwireError> {
        let params = parse(&params_json, "the request's params")?;
        let answer = self
            .run(move |client| async move {
                match timeout_ms {
                    Some(ms) => {
                        client
                            .request_within(&method, params, Duration::from_millis(ms))
                            .await
                    }
                    None => client.request(&method, params).await,
                }
            })
            .await?;
        Ok(json_text(&answer))
    }

    /// Every tool (all pages), as JSON text of an array.
    pub async fn list_tools(&self) -> Result<String, ToolwireError> {
        self.list(|client| async move { client.list_tools().await })
            .await
    }

    /// The tool's `CallToolResult` (an `isError` one too) as JSON text; `arguments_json` is
    /// JSON text of an object. In 2026-07-28 its `input_required` rounds are answered.
    #[uniffi::method(default(progress = None))]
    pub async fn call_tool(
        &self,
        name: String,
        arguments_json: String,
        progress: Option<Arc<dyn ClientProgress>>,
    ) -> Result<String, ToolwireError> {
        let arguments = parse(&arguments_json, "the tool's arguments")?;
        let progress = progress.map(progress_of);
        let result = self
            .run(move |client| async move { client.call_tool(&name, arguments, progress).await })
            .await?;
        Ok(json_text(&result))
    }

    /// Every resource (all pages), as JSON text of an array.
    pub async fn list_resources(&self) -> Result<String, ToolwireError> {
        self.list(|client| async move { client.list_resources().await })
            .await
    }

    /// Every resource template (all pages), as JSON text of an array.
    pub async fn list_resource_templates(&self) -> Result<String, ToolwireError> {
        self.list(|client| async move { client.list_resource_templates().await })
            .await
    }

    /// The `ReadResourceResult` (`contents`), as JSON text.
    #[uniffi::method(default(progress = None))]
    pub async fn read_resource(
        &self,
        uri: String,
        progress: Option<Arc<dyn ClientProgress>>,
    ) -> Result<String, ToolwireError> {
        let progress = progress.map(progress_of);
        let result = self
            .run(move |client| async move { client.read_resource(&uri, progress).await })
            .await?;
        Ok(json_text(&result))
    }

    /// Every prompt (all pages), as JSON text of an array.
    pub async fn list_prompts(&self) -> Result<String, ToolwireError> {
        self.list(|client| async move { client.list_prompts().await })
            .await
    }

    /// The `GetPromptResult` (`messages`), as JSON text.
    #[uniffi::method(default(progress = None))]
    pub async fn get_prompt(
        &self,
        name: String,
        arguments: HashMap<String, String>,
        progress: Option<Arc<dyn ClientProgress>>,
    ) -> Result<String, ToolwireError> {
        let arguments = Value::from(serde_json::Map::from_iter(
            arguments.into_iter().map(|(k, v)| (k, Value::String(v))),
        ));
        let progress = progress.map(progress_of);
        let result = self
            .run(move |client| async move { client.get_prompt(&name, arguments, progress).await })
            .await?;
        Ok(json_text(&result))
    }

    /// The `completion` of `completion/complete` (`values`, `hasMore`, `total`) as JSON text
    /// (`null` if the answer had none). `reference_json` is `{"type": "ref/prompt", "name"}`
    /// or `{"type": "ref/resource", "uri"}`; `context` the other arguments given so far.
    #[uniffi::method(default(context = None))]
    pub async fn complete(
        &self,
        reference_json: String,
        argument: String,
        value: String,
        context: Option<HashMap<String, String>>,
    ) -> Result<String, ToolwireError> {
        let reference = parse(&reference_json, "the completion's reference")?;
        let context = context.map(|context| {
            Value::from(serde_json::Map::from_iter(
                context.into_iter().map(|(k, v)| (k, Value::String(v))),
            ))
        });
        let completion = self
            .run(move |client| async move {
                client.complete(reference, &argument, &value, context).await
            })
            .await?;
        Ok(json_text(&completion))
    }

    /// Ends the session: calls in flight finish first (the server's questions are still
    /// answered meanwhile), then requests still waiting, and any made after, fail with
    /// `ToolwireError.Rpc` -32000. Shutting down twice is harmless. (Kotlin's `close()` frees
    /// the object, as UniFFI's `AutoCloseable`.)
    pub async fn shutdown(&self) {
        let client = self.client.clone();
        // Not aborted with its caller: a close begun runs to its end.
        if let Err(err) = on_runtime(async move { client.close().await }).await {
            tracing::warn!(%err, "closing a client failed");
        }
        // Nothing can be asked any more: the foreign answerer is let go of.
        lock(&self.answerer).take();
    }

    /// The notifications received so far (progress ones too), in order, as JSON text of an
    /// array of whole messages.
    pub fn notifications_json(&self) -> String {
        json_text(&Value::Array(self.client.notifications()))
    }

    /// The handshake's answer as JSON text: the `initialize` result, or in 2026-07-28
    /// `server/discover`'s.
    pub fn server_info_json(&self) -> String {
        json_text(self.client.server_info())
    }

    /// The server's `{name, version, …}` from either era's answer (`{}` if it gave none), as
    /// JSON text.
    pub fn server_json(&self) -> String {
        json_text(&self.client.server())
    }

    /// The capabilities it declared, as JSON text.
    pub fn capabilities_json(&self) -> String {
        json_text(self.client.capabilities())
    }

    /// Its `clientInfo`, as JSON text.
    pub fn client_info_json(&self) -> String {
        json_text(self.client.client_info())
    }

    /// The version it asked for.
    pub fn protocol_version(&self) -> String {
        self.client.protocol_version().to_owned()
    }

    /// Whether it speaks 2026-07-28 (no session handshake; `_meta` on every request).
    pub fn is_modern(&self) -> bool {
        self.client.is_modern()
    }
}

/// Runs one of core's client futures on the engine's runtime (its timers are tokio's, and
/// `Client::over` spawns its reader there). The work is aborted when the caller gives up (a
/// cancelled coroutine or task): core then tells the server the request is cancelled instead
/// of waiting on for nobody.
async fn on_core<T: Send + 'static>(
    future: impl Future<Output = Result<T, toolwire::Error>> + Send + 'static,
) -> Result<T, ToolwireError> {
    on_runtime_abortable(future)
        .await?
        .map_err(ToolwireError::from)
}

fn parse(json: &str, what: &str) -> Result<Value, ToolwireError> {
    serde_json::from_str(json).map_err(|err| invalid_json(what, err))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
