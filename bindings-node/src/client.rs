//! `NativeClient`: core's in-process client (`toolwire::client`) for `toolwire/testing`.
//!
//! Every request is core's (ids, `_meta`, the 2026-07-28 `input_required` rounds, paging,
//! progress tokens, the answers to `roots/list` and `ping`); this file converts and reaches the
//! JS thread. The session is hosted (`hosted.rs`): calls still pending after their first poll
//! are polled on the JS thread, where handlers are called directly.
//!
//! Each request resolves to the JSON text of `{ ok }` or `{ error }` (`errors.rs`). What
//! JavaScript hears meanwhile, a call's progress (`onprogress(paramsJson)`) and the server's
//! questions (`ask(method, paramsJson, reply)`, answered through the `ClientReply`), goes
//! through the client's one `Hop` in the order it happened; a call with progress settles only
//! after the progress heard before its answer has been handed over.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, PromiseRaw};
use napi::{Either, Env};
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::oneshot;
use toolwire::client::{Answerer, Client, ClientOptions, Progress};
use toolwire::host::json_text;
use toolwire::protocol::ProtocolVersion;
use toolwire::{Error, ErrorCode, ErrorObject, Outbound, Server, Session};

use crate::errors;
use crate::hosted;
use crate::js_thread::Hop;
use crate::runtime::runtime;

/// `(method, paramsJson, reply)`: a question of the server's for the JS layer to answer.
pub(crate) type AskArgs = FnArgs<(String, String, ClientReply)>;

type Answer = Result<Value, ErrorObject>;

/// Asks the JS layer's `ask` on the JS thread and waits for its `ClientReply`.
struct JsAnswerer {
    ask: Arc<FunctionRef<AskArgs, ()>>,
    hop: Arc<Hop>,
}

impl Answerer for JsAnswerer {
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let (sender, answer) = oneshot::channel();
        let sender = Arc::new(Mutex::new(Some(sender)));
        let reply = ClientReply {
            sender: sender.clone(),
        };
        let (ask, params) = (self.ask.clone(), json_text(&params));
        let asked = self.hop.queue(move |env| {
            let called = ask
                .borrow_back(env)
                .and_then(|ask| ask.call(FnArgs::from((method, params, reply))));
            if let Err(err) = called {
                settle(
                    &sender,
                    Err(ErrorObject::internal(format!(
                        "the test client could not ask its callback: {}",
                        err.reason
                    ))),
                );
            }
        });
        Box::pin(async move {
            if !asked {
                return Err(ErrorObject::internal("the JavaScript thread is gone"));
            }
            answer.await.unwrap_or_else(|_| {
                Err(ErrorObject::internal(
                    "the test client's callback ended without an answer",
                ))
            })
        })
    }
}

fn settle(sender: &Mutex<Option<oneshot::Sender<Answer>>>, answer: Answer) {
    if let Some(sender) = sender.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = sender.send(answer);
    }
}

/// One answer to a question of the server's: `ok(resultJson)` or `fail(code, message)`; the
/// first one counts.
#[napi]
pub struct ClientReply {
    sender: Arc<Mutex<Option<oneshot::Sender<Answer>>>>,
}

#[napi]
impl ClientReply {
    /// Answers with `result` (JSON text).
    #[napi]
    pub fn ok(&self, result: String) {
        let answer = serde_json::from_str(&result).map_err(|err| {
            ErrorObject::internal(format!(
                "the test client's callback returned no JSON: {err}"
            ))
        });
        settle(&self.sender, answer);
    }

    /// Answers with a JSON-RPC error; `data_json`, its `data` as JSON text, if any.
    #[napi]
    pub fn fail(&self, code: i32, message: String, data_json: Option<String>) {
        let mut error = ErrorObject::new(ErrorCode(code), message);
        if let Some(data) = data_json.and_then(|text| serde_json::from_str(&text).ok()) {
            error = error.with_data(data);
        }
        settle(&self.sender, Err(error));
    }
}

/// What `connect` hands to core.
struct Unconnected {
    session: Session,
    outbound: Outbound,
    options: ClientOptions,
    answerer: Arc<dyn Answerer>,
}

/// Core's client, driven from `lib/testing.js`; see the module's documentation.
#[napi]
pub struct NativeClient {
    unconnected: Mutex<Option<Unconnected>>,
    client: Arc<OnceLock<Arc<Client>>>,
    /// The session, to end it when no client was made on it.
    session: Session,
    hop: Arc<Hop>,
    modern: bool,
}

impl NativeClient {
    /// A client on a new hosted session of `server`, not connected yet; `options` is the JSON
    /// text `lib/testing.js` sends. The description of the error when they are refused.
    pub(crate) fn open(
        env: &Env,
        server: &Server,
        options: &str,
        ask: &Function<'_, AskArgs, ()>,
    ) -> napi::Result<Either<NativeClient, Value>> {
        let options = match client_options(options) {
            Ok(options) => options,
            Err(err) => return Ok(Either::B(errors::describe(&err))),
        };
        // Core's client reads the outbound frames itself.
        let (session, outbound, hop) = hosted::session(env, server)?;
        let answerer: Arc<dyn Answerer> = Arc::new(JsAnswerer {
            ask: Arc::new(ask.create_ref()?),
            hop: hop.clone(),
        });
        let modern = ProtocolVersion::parse(&options.protocol_version)
            .is_some_and(ProtocolVersion::is_stateless);
        Ok(Either::A(NativeClient {
            unconnected: Mutex::new(Some(Unconnected {
                session: session.clone(),
                outbound,
                options,
                answerer,
            })),
            client: Arc::new(OnceLock::new()),
            session,
            hop,
            modern,
        }))
    }

    fn connected(&self) -> Result<Arc<Client>, Error> {
        self.client.get().cloned().ok_or_else(|| {
            Error::InvalidArgument("the test client is not connected (use connect(server))".into())
        })
    }

    /// Runs `work` with the client on the engine's runtime; resolves to its outcome's JSON text.
    fn run<'env, F>(
        &self,
        env: &'env Env,
        work: impl FnOnce(Arc<Client>) -> F,
    ) -> napi::Result<PromiseRaw<'env, String>>
    where
        F: Future<Output = Result<Value, Error>> + Send + 'static,
    {
        let work = self.connected().map(work);
        let running = runtime().spawn(async move { work?.await });
        env.spawn_future(async move { Ok(outcome_text(running.await)) })
    }

    /// `onprogress(paramsJson)` for each progress notification of a call, on the JS thread in
    /// the order they came.
    fn progress(&self, onprogress: &Function<'_, String, ()>) -> napi::Result<Progress> {
        let onprogress = Arc::new(onprogress.create_ref()?);
        let hop = self.hop.clone();
        Ok(Arc::new(move |params: &Value| {
            let (params, onprogress) = (json_text(params), onprogress.clone());
            hop.queue(move |env| {
                let heard = onprogress
                    .borrow_back(env)
                    .and_then(|onprogress| onprogress.call(params));
                if let Err(err) = heard {
                    tracing::warn!(reason = %err.reason, "the test client's onprogress failed");
                }
            });
        }))
    }
}

/// Resolves once the JS thread has run all the work queued on `hop` before: the progress a
/// call heard reaches JavaScript before its result does.
async fn handed_over(hop: &Hop) {
    let (done, handed) = oneshot::channel();
    if hop.queue(move |_| {
        let _ = done.send(());
    }) {
        let _ = handed.await;
    }
}

fn outcome_text(outcome: Result<Result<Value, Error>, tokio::task::JoinError>) -> String {
    let outcome = outcome.unwrap_or_else(|err| {
        Err(Error::Transport(std::io::Error::other(format!(
            "the test client's request stopped: {err}"
        ))))
    });
    json_text(&errors::outcome(outcome))
}

fn json_arg(text: &str, what: &str) -> Result<Value, Error> {
    serde_json::from_str(text)
        .map_err(|err| Error::InvalidArgument(format!("{what} must be JSON: {err}")))
}

fn millis(ms: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
        Error::InvalidArgument(format!(
            "timeoutMs must be a number of milliseconds >= 0, not {ms}"
        ))
    })
}

/// The client's options from `lib/testing.js`'s JSON: `protocolVersion`, `capabilities`,
/// `clientInfo`, `elicitation` and `sampling` (whether it answers them), `roots` (or null),
/// `timeoutMs` (core's one reader of them, for every binding).
fn client_options(text: &str) -> Result<ClientOptions, Error> {
    ClientOptions::from_json(json_arg(text, "the test client's options")?)
}

#[napi]
impl NativeClient {
    /// The handshake (`initialize`, or 2026-07-28's `server/discover`); `ok` is its answer.
    #[napi]
    pub fn connect<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let unconnected = self
            .unconnected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let slot = self.client.clone();
        let running = runtime().spawn(async move {
            let Some(start) = unconnected else {
                return Err(Error::InvalidArgument(
                    "the test client was connected or closed before".into(),
                ));
            };
            let client = Client::over(
                start.session,
                start.outbound,
                start.options,
                Some(start.answerer),
            )
            .await?;
            let answer = client.server_info().clone();
            let _ = slot.set(Arc::new(client));
            Ok(answer)
        });
        env.spawn_future(async move { Ok(outcome_text(running.await)) })
    }

    /// `method` once with `params` (JSON text), waiting `timeoutMs` (the client's default when
    /// not given).
    #[napi]
    pub fn request<'env>(
        &self,
        env: &'env Env,
        method: String,
        params: String,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, move |client| async move {
            let params = json_arg(&params, "params")?;
            match timeout_ms {
                Some(ms) => client.request_within(&method, params, millis(ms)?).await,
                None => client.request(&method, params).await,
            }
        })
    }

    /// The tool's `CallToolResult`; `arguments` is JSON text.
    #[napi]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments: String,
        onprogress: Option<Function<'_, String, ()>>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let progress = onprogress
            .as_ref()
            .map(|onprogress| self.progress(onprogress))
            .transpose()?;
        let hop = self.hop.clone();
        self.run(env, move |client| async move {
            let arguments = json_arg(&arguments, "arguments")?;
            let heard = progress.is_some();
            let result = client.call_tool(&name, arguments, progress).await;
            if heard {
                handed_over(&hop).await;
            }
            result
        })
    }

    #[napi]
    pub fn read_resource<'env>(
        &self,
        env: &'env Env,
        uri: String,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, move |client| async move {
            client.read_resource(&uri, None).await
        })
    }

    /// The `GetPromptResult`; `arguments` is JSON text.
    #[napi]
    pub fn get_prompt<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments: String,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, move |client| async move {
            let arguments = json_arg(&arguments, "arguments")?;
            client.get_prompt(&name, arguments, None).await
        })
    }

    /// The `completion`; `reference` and `context` are JSON text.
    #[napi]
    pub fn complete<'env>(
        &self,
        env: &'env Env,
        reference: String,
        argument: String,
        value: String,
        context: Option<String>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, move |client| async move {
            let reference = json_arg(&reference, "ref")?;
            let context = context
                .map(|context| json_arg(&context, "context"))
                .transpose()?;
            client.complete(reference, &argument, &value, context).await
        })
    }

    #[napi]
    pub fn list_tools<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, |client| async move {
            client.list_tools().await.map(Value::Array)
        })
    }

    #[napi]
    pub fn list_resources<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, |client| async move {
            client.list_resources().await.map(Value::Array)
        })
    }

    #[napi]
    pub fn list_resource_templates<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, |client| async move {
            client.list_resource_templates().await.map(Value::Array)
        })
    }

    #[napi]
    pub fn list_prompts<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        self.run(env, |client| async move {
            client.list_prompts().await.map(Value::Array)
        })
    }

    /// Ends the session (core's close: calls in flight finish first); harmless twice.
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.client.get().cloned();
        let session = self.session.clone();
        // Never connected: nothing is handed to core any more.
        drop(
            self.unconnected
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let running = runtime().spawn(async move {
            match client {
                Some(client) => client.close().await,
                None => session.shutdown().await,
            }
        });
        env.spawn_future(async move {
            let _ = running.await;
            Ok(())
        })
    }

    /// The notifications received so far, as a JSON array.
    #[napi]
    pub fn notifications(&self) -> String {
        self.client.get().map_or_else(
            || "[]".to_owned(),
            |client| json_text(&Value::Array(client.notifications())),
        )
    }

    /// The capabilities it declared (JSON), once connected.
    #[napi]
    pub fn capabilities(&self) -> String {
        self.client.get().map_or_else(
            || "{}".to_owned(),
            |client| json_text(client.capabilities()),
        )
    }

    /// The server's `{name, version, …}` (JSON), once connected.
    #[napi]
    pub fn server(&self) -> String {
        self.client
            .get()
            .map_or_else(|| "{}".to_owned(), |client| json_text(&client.server()))
    }

    /// Whether it speaks 2026-07-28.
    #[napi(getter)]
    pub fn modern(&self) -> bool {
        self.client
            .get()
            .map_or(self.modern, |client| client.is_modern())
    }
}
