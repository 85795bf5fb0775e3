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

use crate::errors::to_py_err;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeHttpEndpoint {
    pub(crate) endpoint: Arc<HttpEndpoint>,
}

#[pymethods]
impl NativeHttpEndpoint {
    /// Starts answering one request: its method, target (path and query), header fields and
    /// the client's address. The body follows through the exchange's `send_body`.
    fn exchange(
        &self,
        method: &str,
        target: &str,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        peer: Option<&str>,
    ) -> PyResult<NativeExchange> {
        let fields = headers.iter().map(|(n, v)| (n.as_slice(), v.as_slice()));
        let peer = peer.and_then(|p| p.parse::<IpAddr>().ok());
        let exchange = self
            .endpoint
            .exchange(method, target, fields, peer)
            .map_err(to_py_err)?;
        Ok(NativeExchange {
            exchange: Arc::new(exchange),
        })
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

    /// The body is complete.
    fn end_body(&self) {
        self.exchange.end_body();
    }

    /// The client went away before the body was complete.
    fn abort_body(&self) {
        self.exchange.abort_body();
    }

    /// `settle((status, [(name, value), ...]))` once the response head is ready; `settle(None)`
    /// when the client hung up before.
    fn response(&self, settle: Py<PyAny>) {
        let exchange = self.exchange.clone();
        runtime().spawn(async move {
            let head = exchange.response().await;
            settle_with(&settle, |py| match head {
                Err(err) => Err(to_py_err(err)),
                Ok(None) => Ok(py.None()),
                Ok(Some(head)) => {
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
                    Ok((head.status, headers)
                        .into_pyobject(py)?
                        .into_any()
                        .unbind())
                }
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

/// Calls `settle(value)` (or `settle(exception)`) with the GIL, from the runtime's thread.
fn settle_with(settle: &Py<PyAny>, value: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) {
    Python::attach(|py| {
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
