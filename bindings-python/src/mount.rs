//! `NativeHttpEndpoint` and `NativeExchange`: core's mountable Streamable HTTP endpoint, for the
//! ASGI application in `python/toolwire/_asgi.py`. Only types are converted here: the request
//! head and body chunks in, the response head and body chunks out. Each operation that waits
//! runs on the engine's runtime and hands its outcome to a `settle(value)` callable, which
//! resolves an asyncio future on the app's loop.

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use toolwire::host::runtime;
use toolwire::transport::http::{HttpEndpoint, HttpExchange};

use crate::bridge::BridgeHandle;
use crate::errors::to_py_err;
use crate::threads::attach_kept;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeHttpEndpoint {
    pub(crate) endpoint: Arc<HttpEndpoint>,
    /// The bridge to the app's loop, whose thread calls `answer`.
    pub(crate) bridge: BridgeHandle,
}

#[pymethods]
impl NativeHttpEndpoint {
    /// Starts answering one request: its method, target (path and query), header fields and
    /// the client's address. The body follows through the exchange's `send_body`; `waited`:
    /// the seconds the app waited for it already (the body timeout counts them).
    #[pyo3(signature = (method, target, headers, peer, waited = 0.0))]
    fn exchange(
        &self,
        method: &str,
        target: &str,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        peer: Option<&str>,
        waited: f64,
    ) -> PyResult<NativeExchange> {
        let fields = headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice()));
        let peer = peer.and_then(|p| p.parse::<IpAddr>().ok());
        // Only this binding's own figure (the timeout it waited): finite and not negative.
        let waited = std::time::Duration::try_from_secs_f64(waited).unwrap_or_default();
        let exchange = self
            .endpoint
            .exchange_after(method, target, fields, peer, waited)
            .map_err(to_py_err)?;
        Ok(NativeExchange {
            exchange: Arc::new(exchange),
        })
    }

    /// Answers one request whose body the app has whole: complete at once when it needs
    /// nothing that has yet to happen (`complete_response()`), else as `exchange`'s answer.
    /// Called on the app's loop's thread: an `async def` tool starts right here, and one that
    /// finishes without waiting completes the answer with no hop.
    fn answer(
        &self,
        method: &str,
        target: &str,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        body: &[u8],
        peer: Option<&str>,
    ) -> PyResult<NativeExchange> {
        let fields = headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice()));
        let peer = peer.and_then(|p| p.parse::<IpAddr>().ok());
        let exchange = self
            .bridge
            .answering_here(|| {
                self.endpoint
                    .answer(method, target, fields, Bytes::copy_from_slice(body), peer)
            })
            .map_err(to_py_err)?;
        Ok(NativeExchange {
            exchange: Arc::new(exchange),
        })
    }

    /// Seconds a client may take to send a request's body (`None`: no limit).
    #[getter]
    fn body_read_timeout(&self) -> Option<f64> {
        self.endpoint
            .body_read_timeout()
            .map(|timeout| timeout.as_secs_f64())
    }

    /// Ends every session (calls in flight finish first); blocks without the GIL.
    fn shutdown(&self, py: Python<'_>) {
        let endpoint = self.endpoint.clone();
        py.detach(|| runtime().block_on(async move { endpoint.shutdown().await }));
    }
}

/// Core's `HttpExchange`; each operation that waits settles a Python future when done.
#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeExchange {
    exchange: Arc<HttpExchange>,
}

#[pymethods]
impl NativeExchange {
    /// Hands over a body chunk; `settle(False)` when the endpoint reads no more of it.
    fn send_body(&self, chunk: &[u8], settle: Py<PyAny>) {
        let exchange = self.exchange.clone();
        let chunk = Bytes::copy_from_slice(chunk);
        runtime().spawn(async move {
            let taken = exchange.send_body(chunk).await;
            settle_with(&settle, |py| {
                Ok(taken.into_pyobject(py)?.to_owned().into_any().unbind())
            });
        });
    }

    /// Hands over a body chunk if the endpoint has room for it now: whether it took it (False:
    /// it reads no more), or `None` when it has no room (then `send_body`).
    fn try_send_body(&self, chunk: &[u8]) -> Option<bool> {
        self.exchange
            .try_send_body(Bytes::copy_from_slice(chunk))
            .ok()
    }

    /// The body is complete.
    fn end_body(&self) {
        self.exchange.end_body();
    }

    /// The client went away before the body was complete.
    fn abort_body(&self) {
        self.exchange.abort_body();
    }

    /// `(status, [(name, value), ...], body)` when `answer` completed the response at once;
    /// `None` otherwise.
    fn complete_response(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.exchange
            .complete_response()
            .map(|head| head_to_py(py, head))
            .transpose()
    }

    /// `(status, [(name, value), ...], body)` when the head is ready now (`body`: the whole
    /// body, or `None` when it streams: then `ready_chunks` and `next_chunk`); `None` when it
    /// is not (then `response`).
    fn ready_response(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.exchange
            .ready_response()
            .map(|head| head_to_py(py, head))
            .transpose()
    }

    /// `(chunks, ended)`: the streamed body's chunks ready now, joined (up to about
    /// `max_bytes`), and whether the body ended (or the client hung up). Empty and not ended:
    /// wait with `next_chunk`.
    fn ready_chunks<'py>(&self, py: Python<'py>, max_bytes: usize) -> (Bound<'py, PyBytes>, bool) {
        let (chunks, ended) = self.exchange.ready_chunks(max_bytes);
        (PyBytes::new(py, &chunks), ended)
    }

    /// `settle((status, [(name, value), ...], body))` once the response head is ready (`body`:
    /// the whole body when complete, else `None` and it streams); `settle(None)` when the
    /// client hung up before.
    fn response(&self, settle: Py<PyAny>) {
        let exchange = self.exchange.clone();
        runtime().spawn(async move {
            let head = exchange.response().await;
            settle_with(&settle, |py| match head {
                Err(err) => Err(to_py_err(err)),
                Ok(None) => Ok(py.None()),
                Ok(Some(head)) => head_to_py(py, head),
            });
        });
    }

    /// `settle(chunk)` with the next body chunk (bytes), or `settle(None)` at its end or once the
    /// client hung up.
    fn next_chunk(&self, settle: Py<PyAny>) {
        let exchange = self.exchange.clone();
        runtime().spawn(async move {
            let chunk = exchange.next_chunk().await;
            settle_with(&settle, |py| {
                Ok(match chunk {
                    Some(chunk) => PyBytes::new(py, &chunk).into_any().unbind(),
                    None => py.None(),
                })
            });
        });
    }

    /// The client hung up: the response (or the wait for it) is dropped, which cancels a
    /// 2026-07-28 request; an earlier era's call goes on and its stream can be resumed.
    fn close(&self) {
        self.exchange.hang_up();
    }
}

/// A response head as Python: `(status, [(name, value), ...], body or None)`.
fn head_to_py(
    py: Python<'_>,
    head: toolwire::transport::http::ResponseHead,
) -> PyResult<Py<PyAny>> {
    let headers: Vec<(Py<PyBytes>, Py<PyBytes>)> = head
        .headers
        .iter()
        .map(|(name, value)| {
            (
                PyBytes::new(py, name.as_bytes()).unbind(),
                PyBytes::new(py, value).unbind(),
            )
        })
        .collect();
    let body = head.body.map(|body| PyBytes::new(py, &body).unbind());
    Ok((head.status, headers, body)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

/// Calls `settle(value)` (or `settle(exception)`) with the GIL, from the runtime's thread.
fn settle_with(settle: &Py<PyAny>, value: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) {
    attach_kept(|py| {
        let argument = match value(py) {
            Ok(value) => value,
            Err(err) => err.into_value(py).into_any(),
        };
        if let Err(err) = settle.call1(py, (argument,)) {
            // The loop is closed (the app is shutting down): nobody waits for this any more.
            tracing::debug!(%err, "an ASGI exchange's outcome found no loop");
        }
    });
}
