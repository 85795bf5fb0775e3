//! A client for a server in the same process: what tests (in every language) and embedding
//! apps drive a [`Server`] with, through its in-memory session, as a real client would.
//!
//! Both protocol eras: a legacy version (the default, `2025-11-25`) opens the session with
//! `initialize`; `2026-07-28` sends every request stand-alone with the version, capabilities
//! and client info in its `_meta`, and answers the server's `input_required` rounds itself.
//! Questions the server asks (elicitation, sampling, roots), as requests or as rounds, go to
//! one [`Answerer`].
//!
//! ```no_run
//! # async fn demo(server: toolwire::Server) -> Result<(), toolwire::Error> {
//! use toolwire::client::{Client, ClientOptions};
//! let client = Client::connect(&server, ClientOptions::default(), None).await?;
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"}), None).await?;
//! client.close().await;
//! # Ok(()) }
//! ```

#[cfg(feature = "http")]
mod http;
mod link;
mod stdio;
#[cfg(feature = "https")]
mod tls;
pub mod vectors;
mod wire;

pub use self::link::Listener;
pub use self::stdio::Command;
pub(crate) use self::wire::{Incoming, Remote};

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

use self::link::{Answers, Link, closed_error, hear};
use self::wire::{Frames, Wire};
use crate::dispatch::{Outbound, Server, Session};
use crate::error::Error;
use crate::protocol::ProtocolVersion;
use crate::wire::ErrorObject;

/// How long a remote's last frames are read after its connection is shut down.
const REMOTE_READ_AFTER_CLOSE: Duration = Duration::from_secs(5);

/// Called with each `notifications/progress` params of the request it was given to.
pub type Progress = Arc<dyn Fn(&Value) + Send + Sync>;

/// Answers the server's questions the client declared it can answer (`elicitation/create`,
/// `sampling/createMessage`), whether asked as a request or as a 2026-07-28 input request.
/// An `Err` goes back to the server as the JSON-RPC error.
pub trait Answerer: Send + Sync + 'static {
    /// The result for `method` with `params`.
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>>;

    /// A log message (`notifications/message`'s params) the server sent about the request
    /// this answerer was given for: the one the transport names, else the only request in
    /// flight with an answerer of its own (stdio and in-process sessions name none). Listeners
    /// ([`Client::on_notification`]) hear it too. Ignored unless overridden.
    fn logged(&self, params: &Value) {
        let _ = params;
    }
}

impl<F> Answerer for F
where
    F: Fn(String, Value) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync + 'static,
{
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self(method, params)
    }
}

/// How a [`Client`] presents itself and what it answers.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The version it asks for: a legacy one initializes a session, `2026-07-28` does not.
    pub protocol_version: String,
    /// Capabilities declared besides those the answers below imply.
    pub capabilities: Value,
    /// `clientInfo`.
    pub client_info: Value,
    /// Whether the [`Answerer`] answers `elicitation/create` (declared as `elicitation`).
    pub elicitation: bool,
    /// Whether the [`Answerer`] answers `sampling/createMessage` (declared as `sampling`).
    pub sampling: bool,
    /// What `roots/list` returns (declared as `roots`); none: the client has no roots.
    pub roots: Option<Value>,
    /// How long a request waits for its answer before it is cancelled.
    pub request_timeout: Duration,
    /// How many `input_required` rounds one request may take: a loop, not a conversation.
    pub max_input_rounds: usize,
    /// Asking for 2026-07-28, the legacy version to `initialize` with instead when the server
    /// does not answer `server/discover` (a server of the handshake era); none: fail.
    pub fallback_version: Option<String>,
    /// How many notifications [`Client::notifications`] keeps (the oldest go first); 0 keeps
    /// none, for a client whose [`on_notification`](Client::on_notification) listener is all
    /// it needs.
    pub notifications_kept: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: ProtocolVersion::LATEST.as_str().to_owned(),
            capabilities: json!({}),
            client_info: json!({"name": "toolwire-client", "version": env!("CARGO_PKG_VERSION")}),
            elicitation: false,
            sampling: false,
            roots: None,
            request_timeout: Duration::from_secs(30),
            max_input_rounds: 16,
            fallback_version: None,
            notifications_kept: link::NOTIFICATIONS_KEPT,
        }
    }
}

impl ClientOptions {
    /// The options from the JSON object a binding passes, in either spelling: `protocolVersion`
    /// or `protocol_version`, `capabilities`, `clientInfo` or `client_info`, `elicitation` and
    /// `sampling` (whether the answerer answers them), `roots` (null: none), `maxInputRounds`
    /// or `max_input_rounds`, and the request timeout as `timeoutMs` (milliseconds) or
    /// `request_timeout` (seconds). A key that is absent or null keeps its default; one of the
    /// wrong type is refused, naming it.
    pub fn from_json(given: Value) -> Result<ClientOptions, Error> {
        let Value::Object(mut given) = given else {
            return Err(Error::InvalidArgument(format!(
                "the client's options must be an object, not {given}"
            )));
        };
        let mut take = |keys: &[&str]| {
            keys.iter()
                .find_map(|key| given.remove(*key).filter(|v| !v.is_null()))
        };
        let wrong = |key: &str, what: &str, got: &Value| {
            Error::InvalidArgument(format!("the client's {key} must be {what}, not {got}"))
        };
        let mut options = ClientOptions::default();
        if let Some(version) = take(&["protocolVersion", "protocol_version"]) {
            options.protocol_version = match version {
                Value::String(version) => version,
                other => return Err(wrong("protocolVersion", "a string", &other)),
            };
        }
        if let Some(capabilities) = take(&["capabilities"]) {
            options.capabilities = capabilities;
        }
        if let Some(info) = take(&["clientInfo", "client_info"]) {
            if !info.is_object() {
                return Err(wrong("clientInfo", "an object", &info));
            }
            options.client_info = info;
        }
        for (key, answered) in [
            ("elicitation", &mut options.elicitation),
            ("sampling", &mut options.sampling),
        ] {
            if let Some(given) = take(&[key]) {
                *answered = given
                    .as_bool()
                    .ok_or_else(|| wrong(key, "true or false", &given))?;
            }
        }
        options.roots = take(&["roots"]);
        if let Some(rounds) = take(&["maxInputRounds", "max_input_rounds"]) {
            options.max_input_rounds = rounds
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| wrong("maxInputRounds", "a whole number", &rounds))?;
        }
        let timeout = |value: &Value, per_second: f64, unit: &str, key: &str| {
            value
                .as_f64()
                .and_then(|n| Duration::try_from_secs_f64(n / per_second).ok())
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "{key} must be a number of {unit} >= 0, not {value}"
                    ))
                })
        };
        if let Some(ms) = take(&["timeoutMs"]) {
            options.request_timeout = timeout(&ms, 1000.0, "milliseconds", "timeoutMs")?;
        } else if let Some(seconds) = take(&["request_timeout"]) {
            options.request_timeout = timeout(&seconds, 1.0, "seconds", "timeout")?;
        }
        Ok(options)
    }

    /// What a client cannot be made with.
    fn check(&self) -> Result<(), Error> {
        if !self.capabilities.is_object() {
            return Err(Error::InvalidArgument(format!(
                "the client's capabilities must be an object, not {}",
                self.capabilities
            )));
        }
        if self.max_input_rounds == 0 {
            return Err(Error::InvalidArgument(
                "max_input_rounds must be at least 1: a request needs one round to be sent".into(),
            ));
        }
        Ok(())
    }

    /// The capabilities sent: `capabilities`, plus each answer given, unless already there.
    fn declared(&self) -> Value {
        let mut declared = self.capabilities.as_object().cloned().unwrap_or_default();
        if self.elicitation {
            declared
                .entry("elicitation")
                .or_insert_with(|| json!({"form": {}}));
        }
        if self.sampling {
            declared.entry("sampling").or_insert_with(|| json!({}));
        }
        if self.roots.is_some() {
            declared
                .entry("roots")
                .or_insert_with(|| json!({"listChanged": false}));
        }
        Value::Object(declared)
    }
}

/// One client session with a server. Requests may run concurrently; answers find their
/// caller by id. A JSON-RPC error answer is [`Error::Rpc`]; no answer in time,
/// [`Error::NoAnswer`].
pub struct Client {
    link: Arc<Link>,
    protocol_version: String,
    modern: bool,
    capabilities: Value,
    client_info: Value,
    server_info: Value,
    request_timeout: Duration,
    max_input_rounds: usize,
    fallback_version: Option<String>,
    reader: Mutex<Option<JoinHandle<()>>>,
    /// The server's lifespan, held by a client of [`connect`](Self::connect) until it closes.
    lifespan: std::sync::Mutex<Option<crate::LifespanHold>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client on a new in-memory session of `server` (on the current tokio runtime), its
    /// handshake done: `initialize` (legacy) or `server/discover` (2026-07-28).
    pub async fn connect(
        server: &Server,
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        // The lifespan first, as any serve holds it: a failed start is this call's error.
        let hold = server.hold_lifespan().await?;
        let made = server.session();
        let client = match made {
            Ok((session, outbound)) => Self::over(session, outbound, options, answerer).await,
            Err(err) => Err(err),
        };
        match client {
            Ok(client) => {
                *client.lifespan.lock().unwrap_or_else(|e| e.into_inner()) = Some(hold);
                Ok(client)
            }
            Err(err) => {
                hold.release().await;
                Err(err)
            }
        }
    }

    /// A client on a session the caller made (a host's own, [`Session::hosted`]), its
    /// handshake done. The client reads `outbound` from now on.
    pub async fn over(
        session: Session,
        outbound: Outbound,
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        if let Err(err) = options.check() {
            session.close();
            return Err(err);
        }
        Self::over_wire(
            Wire::Local(session),
            Frames::Local(outbound),
            options,
            answerer,
        )
        .await
    }

    /// A client on a remote wire: frames go out through `remote` and come up on `incoming`.
    pub(crate) async fn over_remote(
        remote: Box<dyn Remote>,
        incoming: mpsc::Receiver<Incoming>,
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        if let Err(err) = options.check() {
            remote.close();
            return Err(err);
        }
        Self::over_wire(
            Wire::Remote(remote),
            Frames::Remote(incoming),
            options,
            answerer,
        )
        .await
    }

    async fn over_wire(
        wire: Wire,
        frames: Frames,
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        let (heard, to_hear) = mpsc::unbounded_channel();
        tokio::spawn(hear(to_hear));
        let link = Link::new(
            wire,
            options.notifications_kept,
            Answers {
                answerer,
                elicitation: options.elicitation,
                sampling: options.sampling,
                roots: options.roots.clone(),
            },
            heard,
        );
        let reader = tokio::spawn(link.clone().read(frames));
        let modern = ProtocolVersion::parse(&options.protocol_version)
            .is_some_and(ProtocolVersion::is_stateless);
        let mut client = Client {
            link,
            modern,
            capabilities: options.declared(),
            client_info: options.client_info,
            protocol_version: options.protocol_version,
            server_info: Value::Null,
            request_timeout: options.request_timeout,
            max_input_rounds: options.max_input_rounds,
            fallback_version: options.fallback_version,
            reader: Mutex::new(Some(reader)),
            lifespan: std::sync::Mutex::new(None),
        };
        match client.handshake().await {
            Ok(server_info) => {
                client.server_info = server_info;
                Ok(client)
            }
            Err(err) => {
                client.close().await;
                Err(err)
            }
        }
    }

    async fn handshake(&mut self) -> Result<Value, Error> {
        if self.modern {
            match self.request("server/discover", json!({})).await {
                // Any refusal the server sent (an HTTP 400 too), not a connection that ended.
                Err(Error::Rpc(refused)) if !self.link.has_ended() => {
                    let Some(fallback) = self.fallback_version.take() else {
                        return Err(Error::Rpc(refused));
                    };
                    // A server of the handshake era: the same connection, initialized.
                    self.modern = false;
                    self.protocol_version = fallback;
                }
                answer => return answer,
            }
        }
        let params = json!({
            "protocolVersion": self.protocol_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        });
        let answer = self.request("initialize", params).await?;
        self.link.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            None,
        );
        Ok(answer)
    }

    /// The version asked for.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// Whether it speaks 2026-07-28 (no session handshake; `_meta` on every request).
    pub fn is_modern(&self) -> bool {
        self.modern
    }

    /// The capabilities it declared.
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// Its `clientInfo`.
    pub fn client_info(&self) -> &Value {
        &self.client_info
    }

    /// The handshake's answer: the `initialize` result, or in 2026-07-28 `server/discover`'s.
    pub fn server_info(&self) -> &Value {
        &self.server_info
    }

    /// The server's `{name, version, …}`, from either era's answer (`{}` if it gave none).
    pub fn server(&self) -> Value {
        self.server_info
            .get("serverInfo")
            .or_else(|| {
                self.server_info
                    .get("_meta")?
                    .get("io.modelcontextprotocol/serverInfo")
            })
            .cloned()
            .unwrap_or_else(|| json!({}))
    }

    /// Calls `listener` with each notification's method and params as it arrives (progress
    /// too), on the client's reader: keep it short, hand long work to a task.
    pub fn on_notification(&self, listener: Listener) {
        self.link.listen(listener);
    }

    /// Whether the connection ended (the server went away, or the client was closed):
    /// requests now fail at once.
    pub fn is_closed(&self) -> bool {
        self.link.has_ended()
    }

    /// What the client is connected to, as errors name it.
    pub fn describe(&self) -> String {
        self.link.wire().describe()
    }

    /// The notifications received so far (progress ones too), in order, as whole messages:
    /// the last 10,000.
    pub fn notifications(&self) -> Vec<Value> {
        self.link.notifications()
    }

    /// Sends `method` once and returns its `result`, waiting at most the request timeout.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request_within(method, params, self.request_timeout)
            .await
    }

    /// [`request`](Self::request), waiting at most `timeout`; then the server is told the
    /// request is cancelled and [`Error::NoAnswer`] returned. A request dropped before its
    /// answer is cancelled the same way.
    pub async fn request_within(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, Error> {
        self.exchange(method, params, timeout, None).await
    }

    /// Sends one request and waits for its answer; `asker` answers what the server asks about
    /// it meanwhile.
    async fn exchange(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        asker: Option<&Arc<dyn Answerer>>,
    ) -> Result<Value, Error> {
        let params = self.stamped(params);
        let id = self.link.next_id();
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if method != "ping" || params.as_object().is_some_and(|p| !p.is_empty()) {
            message["params"] = params;
        }
        let Some(answer) = self.link.wait_for(id) else {
            return Err(Error::Rpc(closed_error()));
        };
        if let Some(asker) = asker {
            self.link.ask_with(id, asker.clone());
        }
        let mut waiting = Waiting {
            link: &self.link,
            id,
            // The spec forbids cancelling `initialize`.
            cancellable: method != "initialize",
        };
        if !self.link.send(&message, Some(id)) {
            return Err(Error::Rpc(ErrorObject::new(
                crate::wire::ErrorCode(-32000),
                format!("{} would not take the request", self.link.wire().describe()),
            )));
        }
        let answer = match tokio::time::timeout(timeout, answer).await {
            Ok(answer) => answer,
            Err(_) => {
                return Err(Error::NoAnswer {
                    method: method.to_owned(),
                    after: timeout,
                });
            }
        };
        waiting.answered();
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(Error::Rpc(error)),
            Err(_) => Err(Error::Rpc(closed_error())),
        }
    }

    /// In 2026-07-28, the version, capabilities and client info in `_meta` (what the caller
    /// put there wins).
    fn stamped(&self, params: Value) -> Value {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => return other,
        };
        if self.modern {
            let meta = params
                .entry("_meta")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(meta) = meta {
                let stamp = [
                    (
                        "io.modelcontextprotocol/protocolVersion",
                        json!(self.protocol_version),
                    ),
                    (
                        "io.modelcontextprotocol/clientCapabilities",
                        self.capabilities.clone(),
                    ),
                    (
                        "io.modelcontextprotocol/clientInfo",
                        self.client_info.clone(),
                    ),
                ];
                for (key, value) in stamp {
                    meta.entry(key).or_insert(value);
                }
            }
        }
        Value::Object(params)
    }

    /// A request that may answer `input_required` (2026-07-28): the questions are answered
    /// as the server's requests are, and the request sent again with `inputResponses` (and
    /// the `requestState` the server gave), until it completes. `progress` hears the
    /// request's progress notifications.
    pub async fn request_answering_input(
        &self,
        method: &str,
        params: Value,
        progress: Option<Progress>,
    ) -> Result<Value, Error> {
        self.request_asking(method, params, progress, None).await
    }

    /// [`request_answering_input`](Self::request_answering_input), with `asker` answering
    /// the server's questions about this request (its requests, or its `input_required`
    /// rounds) instead of the client's [`Answerer`]: what a proxy relays to its own caller.
    /// Over stdio and in-process sessions, where a question does not say which request it is
    /// about, the newest request with an asker answers.
    pub async fn request_asking(
        &self,
        method: &str,
        params: Value,
        progress: Option<Progress>,
        asker: Option<Arc<dyn Answerer>>,
    ) -> Result<Value, Error> {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(Error::InvalidArgument(format!(
                    "{method}'s params must be an object, not {other}"
                )));
            }
        };
        let watching = progress.map(|progress| {
            let token = format!("progress-{}", self.link.next_id());
            self.link.watch_progress(token.clone(), progress);
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("progressToken".to_owned(), json!(token));
            }
            Watching {
                link: &self.link,
                token,
            }
        });
        let answer = self.rounds(method, params, asker.as_ref()).await;
        if let Some(watching) = watching {
            // The result comes after the progress heard before it.
            self.link.progress_heard().await;
            drop(watching);
        }
        answer
    }

    async fn rounds(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        asker: Option<&Arc<dyn Answerer>>,
    ) -> Result<Value, Error> {
        for _ in 0..self.max_input_rounds {
            let sent = Value::Object(params.clone());
            let result = self
                .exchange(method, sent, self.request_timeout, asker)
                .await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let mut answers = Map::new();
            let mut refused = None;
            if let Some(Value::Object(questions)) = result.get("inputRequests") {
                // Every question is asked, even after one is refused: an asker that relays
                // them gathers a round's questions into one round of its own.
                for (key, question) in questions {
                    let asked = question.get("method").and_then(Value::as_str).unwrap_or("");
                    let asked_params = question.get("params").cloned().unwrap_or_else(|| json!({}));
                    let answer = match asker {
                        Some(asker) => asker.answer(asked.to_owned(), asked_params).await,
                        None => self.link.answers.answer(asked, asked_params).await,
                    };
                    match answer {
                        Ok(answer) => {
                            answers.insert(key.clone(), answer);
                        }
                        Err(error) => {
                            refused.get_or_insert(error);
                        }
                    }
                }
            }
            if let Some(error) = refused {
                return Err(Error::Rpc(error));
            }
            params.insert("inputResponses".to_owned(), Value::Object(answers));
            match result.get("requestState") {
                Some(state) => params.insert("requestState".to_owned(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        Err(Error::Rpc(ErrorObject::internal(format!(
            "{method} still asked for input after {} rounds",
            self.max_input_rounds
        ))))
    }

    /// Every item of a paged list (`tools/list` and its kind), following `nextCursor`.
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        let mut params = json!({});
        let mut cursors = HashSet::new();
        loop {
            let mut page = self.request(method, params).await?;
            if let Some(Value::Array(found)) = page.get_mut(key).map(Value::take) {
                items.extend(found);
            }
            match page.get("nextCursor") {
                Some(Value::String(cursor)) if !cursor.is_empty() => {
                    // A cursor given twice would page for ever.
                    if !cursors.insert(cursor.clone()) {
                        return Err(Error::Rpc(ErrorObject::internal(format!(
                            "{method}: the server gave the cursor {cursor:?} twice"
                        ))));
                    }
                    params = json!({"cursor": cursor});
                }
                _ => return Ok(items),
            }
        }
    }

    /// Every tool.
    pub async fn list_tools(&self) -> Result<Vec<Value>, Error> {
        self.list_all("tools/list", "tools").await
    }

    /// The tool's `CallToolResult` (one with `isError` too).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<Progress>,
    ) -> Result<Value, Error> {
        self.request_answering_input("tools/call", named(name, arguments), progress)
            .await
    }

    /// Every resource.
    pub async fn list_resources(&self) -> Result<Vec<Value>, Error> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, Error> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// The `ReadResourceResult` (`contents`).
    pub async fn read_resource(
        &self,
        uri: &str,
        progress: Option<Progress>,
    ) -> Result<Value, Error> {
        self.request_answering_input("resources/read", json!({"uri": uri}), progress)
            .await
    }

    /// Every prompt.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, Error> {
        self.list_all("prompts/list", "prompts").await
    }

    /// The `GetPromptResult` (`messages`); `arguments` is an object of strings.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<Progress>,
    ) -> Result<Value, Error> {
        self.request_answering_input("prompts/get", named(name, arguments), progress)
            .await
    }

    /// The `completion` of `completion/complete` (`values`, `hasMore`, `total`). `reference`
    /// is `{"type": "ref/prompt", "name"}` or `{"type": "ref/resource", "uri"}`; `context` the
    /// other arguments given so far.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> Result<Value, Error> {
        let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        if let Some(context) = context {
            params["context"] = json!({"arguments": context});
        }
        let mut result = self.request("completion/complete", params).await?;
        Ok(result
            .get_mut("completion")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// Ends the session: calls in flight finish first (the server's questions are still
    /// answered meanwhile), every answer is read, then requests still waiting fail with the
    /// closed error (-32000). Closing twice is harmless.
    pub async fn close(&self) {
        // Held until the reader has ended: a second close waits for the first.
        let mut reader = self.reader.lock().await;
        self.link.wire().shutdown().await;
        if let Some(mut reader) = reader.take() {
            match self.link.wire() {
                Wire::Local(_) => {
                    let _ = reader.await;
                }
                // A remote's end is ended already: what it still sends is not waited for long.
                Wire::Remote(_) => {
                    if tokio::time::timeout(REMOTE_READ_AFTER_CLOSE, &mut reader)
                        .await
                        .is_err()
                    {
                        reader.abort();
                    }
                }
            }
        }
        let hold = self
            .lifespan
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(hold) = hold {
            hold.release().await;
        }
    }
}

impl Drop for Client {
    /// A client dropped unclosed ends its session at once (its calls cancelled).
    fn drop(&mut self) {
        if self.reader.get_mut().is_some() {
            self.link.wire().close();
        }
    }
}

/// `{name, arguments}` of a tool call or prompt (no arguments: `{}`).
fn named(name: &str, arguments: Value) -> Value {
    let arguments = if arguments.is_null() {
        json!({})
    } else {
        arguments
    };
    json!({"name": name, "arguments": arguments})
}

/// A request sent and not answered yet: given up on (timed out, dropped), the server is told.
struct Waiting<'a> {
    link: &'a Arc<Link>,
    id: u64,
    cancellable: bool,
}

impl Waiting<'_> {
    fn answered(&mut self) {
        self.link.unask(self.id);
        self.id = 0;
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.id == 0 {
            return;
        }
        self.link.unask(self.id);
        if self.link.forget(self.id) && self.cancellable {
            self.link.send(
                &json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": self.id, "reason": "the client stopped waiting"},
                }),
                None,
            );
        }
    }
}

/// A request's progress token, watched until the request ends.
struct Watching<'a> {
    link: &'a Arc<Link>,
    token: String,
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.link.unwatch_progress(&self.token);
    }
}
