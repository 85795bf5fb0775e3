//! `NativeClient`: core's in-process client (`toolwire::client`) for `toolwire.testing`.
//!
//! Every request is core's; this file only hands outcomes to Python. They go through one
//! thread per client, in the order they happened (a call's progress before its result): a
//! call's `done(kind, payload)` gets `"ok"` with the result as JSON text, `"rpc"` with the
//! JSON-RPC error object as JSON text, or `"error"` with an exception; its `progress(params)`
//! each progress notification's params as JSON text; the client's `ask(method, params, reply)`
//! each question of the server's, answered through the `ClientReply`. The Python side hands
//! each on to its loop.

use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::oneshot;
use toolwire::client::{Answerer, Client, ClientOptions, Progress};
use toolwire::host::runtime;
use toolwire::{Error, ErrorCode, ErrorObject, Session};

use crate::errors::to_py_err;

type Delivery = Box<dyn FnOnce(Python<'_>) + Send>;

/// Hands deliveries to Python in order, on a thread of its own that holds the GIL only while
/// it delivers. Ends when the last sender is gone.
#[derive(Clone)]
struct Deliveries {
    sender: Sender<Delivery>,
}

impl Deliveries {
    fn start() -> PyResult<Self> {
        let (sender, jobs) = channel::<Delivery>();
        std::thread::Builder::new()
            .name("toolwire-client".into())
            .spawn(move || {
                while let Ok(job) = jobs.recv() {
                    Python::attach(job);
                }
            })
            .map_err(|err| PyRuntimeError::new_err(format!("cannot start a thread: {err}")))?;
        Ok(Deliveries { sender })
    }

    /// Calls `to` with what `args` makes, with the GIL held; a failure is reported as
    /// unraisable (it runs on no Python caller's stack).
    fn call<A>(&self, to: Py<PyAny>, args: impl FnOnce(Python<'_>) -> A + Send + 'static)
    where
        A: for<'py> pyo3::call::PyCallArgs<'py>,
    {
        // Gone only when the client is: nobody waits for the delivery then.
        let _ = self.sender.send(Box::new(move |py| {
            if let Err(err) = to.call1(py, args(py)) {
                err.write_unraisable(py, None);
            }
            drop(to);
        }));
    }

    fn outcome(&self, done: Py<PyAny>, outcome: Result<Value, Error>) {
        match outcome {
            Ok(value) => {
                let text = value.to_string();
                self.call(done, move |_| ("ok", text));
            }
            Err(Error::Rpc(error)) => {
                let text = serde_json::to_string(&error).unwrap_or_default();
                self.call(done, move |_| ("rpc", text));
            }
            Err(err) => self.call(done, move |py| ("error", to_py_err(err).into_value(py))),
        }
    }
}

/// The client's options from the JSON `toolwire.testing` sends (every key present).
fn client_options(text: &str) -> PyResult<ClientOptions> {
    ClientOptions::from_json(json_arg(text, "client options")?).map_err(to_py_err)
}

fn seconds(value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        PyValueError::new_err(format!(
            "timeout must be a number of seconds >= 0, not {value}"
        ))
    })
}

/// Asks Python's `ask` (through the delivery thread) and waits for its `ClientReply`.
struct PyAnswerer {
    deliveries: Deliveries,
    ask: Arc<Py<PyAny>>,
}

impl Answerer for PyAnswerer {
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send>> {
        let (reply, answer) = oneshot::channel();
        let text = params.to_string();
        let ask = self.ask.clone();
        let _ = self.deliveries.sender.send(Box::new(move |py| {
            let reply = ClientReply {
                sender: Mutex::new(Some(reply)),
            };
            if let Err(err) = ask.call1(py, (method, text, reply)) {
                err.write_unraisable(py, None);
            }
        }));
        Box::pin(async move {
            answer.await.unwrap_or_else(|_| {
                Err(ErrorObject::internal(
                    "the test client's callback ended without an answer",
                ))
            })
        })
    }
}

/// One answer to a question of the server's: `ok(result_json)` or `fail(code, message, data_json)`.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct ClientReply {
    sender: Mutex<Option<oneshot::Sender<Result<Value, ErrorObject>>>>,
}

impl ClientReply {
    fn settle(&self, answer: Result<Value, ErrorObject>) {
        if let Some(sender) = self.sender.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = sender.send(answer);
        }
    }
}

#[pymethods]
impl ClientReply {
    /// Answers with `result` (JSON text of an object).
    fn ok(&self, result: &str) {
        self.settle(serde_json::from_str(result).map_err(|err| {
            ErrorObject::internal(format!(
                "the test client's callback returned no JSON: {err}"
            ))
        }));
    }

    /// Answers with a JSON-RPC error.
    #[pyo3(signature = (code, message, data=None))]
    fn fail(&self, code: i32, message: String, data: Option<&str>) {
        let mut error = ErrorObject::new(ErrorCode(code), message);
        if let Some(data) = data.and_then(|data| serde_json::from_str(data).ok()) {
            error = error.with_data(data);
        }
        self.settle(Err(error));
    }
}

/// Where a client is. Closing drops core's client (and with it the host's `ask`, which refers
/// back to the Python `TestClient`): nothing keeps a closed client alive.
enum Slot {
    Connecting,
    Open(Arc<Client>),
    /// Closed, with what was received (still readable after the block).
    Closed(Vec<Value>),
}

/// Core's client, driven from `toolwire.testing`. Every method returns at once; its outcome is
/// delivered to its `done` later (see the module's documentation).
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeClient {
    slot: Arc<Mutex<Slot>>,
    deliveries: Deliveries,
}

fn lock_slot(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

impl NativeClient {
    /// Connects over `session`; `done` gets `"ok"` with `{serverInfo, server, modern,
    /// capabilities}`: the handshake's answer and what core read from it.
    pub(crate) fn connect(
        session: Session,
        outbound: toolwire::Outbound,
        options: &str,
        ask: Py<PyAny>,
        done: Py<PyAny>,
    ) -> PyResult<NativeClient> {
        let options = client_options(options)?;
        let deliveries = Deliveries::start()?;
        let answerer: Arc<dyn Answerer> = Arc::new(PyAnswerer {
            deliveries: deliveries.clone(),
            ask: Arc::new(ask),
        });
        let slot = Arc::new(Mutex::new(Slot::Connecting));
        let (filled, to_deliver) = (slot.clone(), deliveries.clone());
        runtime().spawn(async move {
            let client = match Client::over(session, outbound, options, Some(answerer)).await {
                Ok(client) => Arc::new(client),
                Err(err) => return to_deliver.outcome(done, Err(err)),
            };
            let connected = json!({
                "serverInfo": client.server_info(),
                "server": client.server(),
                "modern": client.is_modern(),
                "capabilities": client.capabilities(),
            });
            let closed_meanwhile = {
                let mut slot = lock_slot(&filled);
                match *slot {
                    Slot::Connecting => {
                        *slot = Slot::Open(client.clone());
                        false
                    }
                    _ => true,
                }
            };
            if closed_meanwhile {
                // `close` came first: this client ends here.
                client.close().await;
                return to_deliver.outcome(done, Err(Error::Closed));
            }
            to_deliver.outcome(done, Ok(connected));
        });
        Ok(NativeClient { slot, deliveries })
    }

    fn client(&self) -> PyResult<Arc<Client>> {
        match &*lock_slot(&self.slot) {
            Slot::Open(client) => Ok(client.clone()),
            Slot::Connecting => Err(PyRuntimeError::new_err("the client is not connected yet")),
            Slot::Closed(_) => Err(PyRuntimeError::new_err("the client is closed")),
        }
    }

    /// Runs `work` on the engine's runtime and delivers its outcome to `done`.
    fn spawn<F>(
        &self,
        done: Py<PyAny>,
        work: impl FnOnce(Arc<Client>) -> F + Send + 'static,
    ) -> PyResult<()>
    where
        F: Future<Output = Result<Value, Error>> + Send + 'static,
    {
        let client = self.client()?;
        let deliveries = self.deliveries.clone();
        runtime().spawn(async move { deliveries.outcome(done, work(client).await) });
        Ok(())
    }
}

fn json_arg(text: &str, what: &str) -> PyResult<Value> {
    serde_json::from_str(text)
        .map_err(|err| PyValueError::new_err(format!("{what} must be JSON: {err}")))
}

#[pymethods]
impl NativeClient {
    /// `method` once, waiting at most `timeout` seconds.
    fn request(&self, method: String, params: &str, timeout: f64, done: Py<PyAny>) -> PyResult<()> {
        let (params, timeout) = (json_arg(params, "params")?, seconds(timeout)?);
        self.spawn(done, move |client| async move {
            client.request_within(&method, params, timeout).await
        })
    }

    /// `method`, answering its `input_required` rounds; `progress(params_json)` hears its
    /// progress notifications.
    #[pyo3(signature = (method, params, done, progress=None))]
    fn request_answering_input(
        &self,
        method: String,
        params: &str,
        done: Py<PyAny>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let params = json_arg(params, "params")?;
        let progress = progress.map(|to| -> Progress {
            let (deliveries, to) = (self.deliveries.clone(), Arc::new(to));
            Arc::new(move |params: &Value| {
                let (text, to) = (params.to_string(), to.clone());
                let _ = deliveries.sender.send(Box::new(move |py| {
                    if let Err(err) = to.call1(py, (text,)) {
                        err.write_unraisable(py, None);
                    }
                }));
            })
        });
        self.spawn(done, move |client| async move {
            client
                .request_answering_input(&method, params, progress)
                .await
        })
    }

    /// Every item of a paged list, as a JSON array.
    fn list_all(&self, method: String, key: String, done: Py<PyAny>) -> PyResult<()> {
        self.spawn(done, move |client| async move {
            client.list_all(&method, &key).await.map(Value::Array)
        })
    }

    /// `completion/complete`'s `completion` (`reference` and `context` as JSON text).
    #[pyo3(signature = (reference, argument, value, context, done))]
    fn complete(
        &self,
        reference: &str,
        argument: String,
        value: String,
        context: Option<&str>,
        done: Py<PyAny>,
    ) -> PyResult<()> {
        let reference = json_arg(reference, "the reference")?;
        let context = context.map(|c| json_arg(c, "the context")).transpose()?;
        self.spawn(done, move |client| async move {
            client.complete(reference, &argument, &value, context).await
        })
    }

    /// Ends the session (calls in flight finish first) and lets core's client go; `done` gets
    /// `"ok"` with `null` after. A connect still under way ends when it completes.
    fn close(&self, done: Py<PyAny>) {
        let deliveries = self.deliveries.clone();
        let open = {
            let mut slot = lock_slot(&self.slot);
            match std::mem::replace(&mut *slot, Slot::Closed(Vec::new())) {
                Slot::Open(client) => Some(client),
                Slot::Closed(kept) => {
                    *slot = Slot::Closed(kept);
                    None
                }
                Slot::Connecting => None,
            }
        };
        let Some(client) = open else {
            return deliveries.outcome(done, Ok(Value::Null));
        };
        let slot = self.slot.clone();
        runtime().spawn(async move {
            client.close().await;
            *lock_slot(&slot) = Slot::Closed(client.notifications());
            drop(client);
            deliveries.outcome(done, Ok(Value::Null));
        });
    }

    /// Calls `heard(method)` (on the client's thread) as each notification arrives.
    fn on_notification(&self, heard: Py<PyAny>) -> PyResult<()> {
        let client = self.client()?;
        let deliveries = self.deliveries.clone();
        let heard = Arc::new(heard);
        client.on_notification(Arc::new(move |method: &str, _params: &Value| {
            let (method, heard) = (method.to_owned(), heard.clone());
            // The reader never takes the GIL: the delivery thread calls.
            let _ = deliveries.sender.send(Box::new(move |py| {
                if let Err(err) = heard.call1(py, (method,)) {
                    err.write_unraisable(py, None);
                }
            }));
        }));
        Ok(())
    }

    /// The notifications received so far, as a JSON array (after close: all it received).
    fn notifications(&self) -> String {
        match &*lock_slot(&self.slot) {
            Slot::Open(client) => Value::Array(client.notifications()).to_string(),
            Slot::Closed(kept) => Value::Array(kept.clone()).to_string(),
            Slot::Connecting => "[]".to_owned(),
        }
    }
}
