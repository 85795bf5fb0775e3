//! `NativeContext`: a tool call's context, for the Python `Context` wrapper.

use std::future::Future;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;
use toolwire::{Context, LogLevel, RequestId, RequestOptions};

use crate::convert::{to_json, to_py};
use crate::errors::to_py_err;
use crate::threads::deliver_python;
use toolwire::host::runtime;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeContext {
    ctx: Context,
}

impl NativeContext {
    pub(crate) fn new(ctx: Context) -> Self {
        NativeContext { ctx }
    }
}

/// Runs `work` on the runtime and returns an asyncio future (of `event_loop`) for its result.
pub(crate) fn into_asyncio<F>(event_loop: &Bound<'_, PyAny>, work: F) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<Value, toolwire::Error>> + Send + 'static,
{
    let future = event_loop.call_method0("create_future")?;
    let target = future.clone().unbind();
    let event_loop = event_loop.clone().unbind();
    runtime().spawn(async move {
        let outcome = work.await;
        let delivered = deliver_python(move |py| {
            let resolver = match outcome {
                Ok(value) => to_py(py, &value).map(|v| Resolver {
                    future: target,
                    ok: true,
                    value: v,
                }),
                Err(err) => Ok(Resolver {
                    future: target,
                    ok: false,
                    value: to_py_err(err).into_value(py).into_any(),
                }),
            };
            let scheduled = resolver.and_then(|resolver| {
                event_loop.call_method1(py, "call_soon_threadsafe", (Py::new(py, resolver)?,))
            });
            if let Err(err) = scheduled {
                // The loop is closed: nobody is waiting any more.
                tracing::debug!("could not deliver a result to asyncio: {err}");
            }
        });
        if let Err(why) = delivered.await {
            tracing::error!("could not deliver a result to asyncio: {why}");
        }
    });
    Ok(future.unbind())
}

/// Sets an asyncio future's outcome on its loop's thread, unless it was cancelled meanwhile.
#[pyclass]
struct Resolver {
    future: Py<PyAny>,
    ok: bool,
    value: Py<PyAny>,
}

#[pymethods]
impl Resolver {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let future = self.future.bind(py);
        if future.call_method0("done")?.is_truthy()? {
            return Ok(());
        }
        let method = if self.ok {
            "set_result"
        } else {
            "set_exception"
        };
        future.call_method1(method, (self.value.clone_ref(py),))?;
        Ok(())
    }
}

#[pymethods]
impl NativeContext {
    /// Whether the client asked for progress (its request carried a `progressToken`).
    #[getter]
    fn wants_progress(&self) -> bool {
        self.ctx.wants_progress()
    }

    /// Reports progress; returns whether it was sent. Does not block: callable from any thread.
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.ctx.progress(progress, total, message)
    }

    /// Sends a log message if `level` passes the client's level; returns whether it was sent.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &Bound<'_, PyAny>, logger: Option<&str>) -> PyResult<bool> {
        let level = LogLevel::parse(level)
            .ok_or_else(|| PyValueError::new_err(format!("unknown log level {level:?}")))?;
        Ok(self.ctx.log_as(level, logger, to_json(data)?))
    }

    /// Streamable HTTP with an SSE answer: closes this call's connection (the client resumes).
    fn close_sse_stream(&self) {
        self.ctx.close_sse_stream();
    }

    #[getter]
    fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    #[getter]
    fn request_id(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.ctx.request_id() {
            RequestId::Number(n) => Ok(n.into_pyobject(py)?.into_any().unbind()),
            RequestId::String(s) => Ok(s.as_ref().into_pyobject(py)?.into_any().unbind()),
        }
    }

    #[getter]
    fn tool_name(&self) -> String {
        self.ctx.tool_name().to_owned()
    }

    #[getter]
    fn protocol_version(&self) -> &'static str {
        self.ctx.protocol_version().as_str()
    }

    #[getter]
    fn client_info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.ctx.client_info() {
            Some(info) => to_py(py, &serde_json::to_value(info).unwrap_or(Value::Null)),
            None => Ok(py.None()),
        }
    }

    #[getter]
    fn client_capabilities(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.ctx.client_capabilities())
    }

    /// Whether the client renders MCP Apps views.
    #[getter]
    fn client_renders_apps(&self) -> bool {
        self.ctx.client_renders_apps()
    }

    /// The settings the client declared for the extension `id`, or `None`.
    fn client_extension(&self, py: Python<'_>, id: &str) -> PyResult<Option<Py<PyAny>>> {
        self.ctx
            .client_extension(id)
            .map(|settings| to_py(py, settings))
            .transpose()
    }

    /// 2026-07-28 MRTR: the client's answers to an earlier round's questions, by key.
    #[getter]
    fn input_responses(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &Value::Object(self.ctx.input_responses().clone()))
    }

    /// 2026-07-28 MRTR: the state this tool returned last round, verified by the engine.
    #[getter]
    fn request_state(&self) -> Option<String> {
        self.ctx.request_state().map(str::to_owned)
    }

    /// The request's W3C trace context: `traceparent`, `tracestate`, `baggage` (each or None).
    #[getter]
    fn trace_context(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let trace = self.ctx.trace_context();
        to_py(
            py,
            &serde_json::json!({
                "traceparent": trace.traceparent,
                "tracestate": trace.tracestate,
                "baggage": trace.baggage,
            }),
        )
    }

    /// `sampling/createMessage`, `elicitation/create` or `roots/list` (by `kind`: "sample",
    /// "elicit", "roots"), answered as an asyncio future.
    #[pyo3(signature = (kind, params, event_loop, timeout_ms=None))]
    fn client_request(
        &self,
        kind: &str,
        params: &Bound<'_, PyAny>,
        event_loop: &Bound<'_, PyAny>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        #[derive(Clone, Copy)]
        enum Kind {
            Sample,
            Elicit,
            Roots,
        }
        let kind = match kind {
            "sample" => Kind::Sample,
            "elicit" => Kind::Elicit,
            "roots" => Kind::Roots,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown client request kind {other:?}"
                )));
            }
        };
        let params = to_json(params)?;
        let ctx = self.ctx.clone();
        let options = request_options(timeout_ms);
        into_asyncio(event_loop, async move {
            match kind {
                Kind::Sample => ctx.sample(params, options).await,
                Kind::Elicit => ctx.elicit(params, options).await,
                // The list itself: what every language's `list_roots` returns.
                Kind::Roots => ctx
                    .list_roots(options)
                    .await
                    .map(|roots| serde_json::json!(roots)),
            }
        })
    }

    /// Several `(method, params)` questions at once (one MRTR round in 2026-07-28, one after
    /// the other in a session), answered as an asyncio future of their results in order.
    #[pyo3(signature = (questions, event_loop, timeout_ms=None))]
    fn ask_all(
        &self,
        questions: Vec<(String, Bound<'_, PyAny>)>,
        event_loop: &Bound<'_, PyAny>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let questions = questions
            .into_iter()
            .map(|(method, params)| Ok((method, to_json(&params)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let ctx = self.ctx.clone();
        let options = request_options(timeout_ms);
        into_asyncio(event_loop, async move {
            ctx.ask_all(questions, options).await.map(Value::Array)
        })
    }

    /// Any request `method` to the client (`params` an object or `None`), answered as an
    /// asyncio future of the result.
    #[pyo3(signature = (method, params, event_loop, timeout_ms=None))]
    fn request(
        &self,
        method: String,
        params: &Bound<'_, PyAny>,
        event_loop: &Bound<'_, PyAny>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let params = to_json(params)?;
        let ctx = self.ctx.clone();
        let options = request_options(timeout_ms);
        into_asyncio(event_loop, async move {
            ctx.request(&method, params, options).await
        })
    }

    /// An asyncio future that completes when the call is cancelled.
    fn cancelled(&self, event_loop: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let ctx = self.ctx.clone();
        into_asyncio(event_loop, async move {
            ctx.cancelled().await;
            Ok(Value::Null)
        })
    }
}

fn request_options(timeout_ms: Option<u64>) -> RequestOptions {
    match timeout_ms {
        Some(ms) => RequestOptions::with_timeout(std::time::Duration::from_millis(ms)),
        None => RequestOptions::default(),
    }
}
