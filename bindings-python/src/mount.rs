//! `NativeHttpEndpoint` and `NativeExchange`: core's mountable Streamable HTTP endpoint, for the
//! ASGI application in `python/toolwire/_asgi.py`. Only types are converted here: the request
//! head and body chunks in, the response head and body chunks out. Each operation that waits
//! runs on the engine's runtime and hands its outcome to a `settle(value)` callable, which
//! resolves an asyncio future on the app's loop.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tokio::task::{AbortHandle, JoinHandle};
use toolwire::CancellationToken;
use toolwire::host::runtime;
use toolwire::transport::http::{HttpBody, HttpEndpoint, RequestBodySender};

use crate::errors::to_py_err;

type Response = toolwire::transport::http::HttpResponse;

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
        let (request, sender) = HttpEndpoint::request(method, target, fields).map_err(to_py_err)?;
        let peer = peer.and_then(|p| p.parse::<IpAddr>().ok());
        let endpoint = self.endpoint.clone();
        let answering = runtime().spawn(async move { endpoint.handle(request, peer).await });
        Ok(NativeExchange {
            sender: Mutex::new(Some(sender)),
            stop_answering: answering.abort_handle(),
            answering: Mutex::new(Some(answering)),
            body: Arc::new(tokio::sync::Mutex::new(None)),
            hung_up: CancellationToken::new(),
        })
    }

    /// Ends every session (calls in flight finish first); blocks without the GIL.
    fn shutdown(&self, py: Python<'_>) {
        let endpoint = self.endpoint.clone();
        py.detach(|| runtime().block_on(async move { endpoint.shutdown().await }));
    }
}

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeExchange {
    sender: Mutex<Option<RequestBodySender>>,
    answering: Mutex<Option<JoinHandle<Response>>>,
    /// Drops the answering task (the hang-up before the response head).
    stop_answering: AbortHandle,
    body: Arc<tokio::sync::Mutex<Option<HttpBody>>>,
    /// The client went away: chunks still awaited come back as the end.
    hung_up: CancellationToken,
}

#[pymethods]
impl NativeExchange {
    /// Hands over a body chunk; `settle(False)` when the endpoint reads no more of it.
    fn send_body(&self, chunk: &[u8], settle: Py<PyAny>) {
        let sender = lock(&self.sender).clone();
        let chunk = Bytes::copy_from_slice(chunk);
        runtime().spawn(async move {
            let taken = match sender {
                Some(sender) => sender.send(chunk).await,
                None => false,
            };
            settle_with(&settle, |py| {
                Ok(taken.into_pyobject(py)?.to_owned().into_any().unbind())
            });
        });
    }

    /// The body is complete.
    fn end_body(&self) {
        lock(&self.sender).take();
    }

    /// The client went away before the body was complete.
    fn abort_body(&self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
    }

    /// `settle((status, [(name, value), ...]))` once the response head is ready; `settle(None)`
    /// when the client hung up before.
    fn response(&self, settle: Py<PyAny>) {
        let Some(answering) = lock(&self.answering).take() else {
            settle_with(&settle, |_| {
                Err(PyRuntimeError::new_err("the response was taken already"))
            });
            return;
        };
        let body = self.body.clone();
        let hung_up = self.hung_up.clone();
        runtime().spawn(async move {
            let response = match answering.await {
                Ok(response) => response,
                // The client hung up first: nobody waits for the head.
                Err(err) if err.is_cancelled() => {
                    settle_with(&settle, |py| Ok(py.None()));
                    return;
                }
                Err(err) => {
                    let message = format!("the endpoint failed: {err}");
                    settle_with(&settle, |_| Err(PyRuntimeError::new_err(message)));
                    return;
                }
            };
            let (head, response_body) = response.into_parts();
            {
                let mut slot = body.lock().await;
                if hung_up.is_cancelled() {
                    // The client went away meanwhile: the body (and a 2026-07-28 request with
                    // it) goes now, not when this exchange is freed.
                    drop(response_body);
                    settle_with(&settle, |py| Ok(py.None()));
                    return;
                }
                *slot = Some(response_body);
            }
            settle_with(&settle, |py| {
                let headers: Vec<(Py<PyBytes>, Py<PyBytes>)> = head
                    .headers
                    .iter()
                    .map(|(name, value)| {
                        (
                            PyBytes::new(py, name.as_str().as_bytes()).unbind(),
                            PyBytes::new(py, value.as_bytes()).unbind(),
                        )
                    })
                    .collect();
                Ok((head.status.as_u16(), headers)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            });
        });
    }

    /// `settle(chunk)` with the next body chunk (bytes), or `settle(None)` at its end or once the
    /// client hung up.
    fn next_chunk(&self, settle: Py<PyAny>) {
        let body = self.body.clone();
        let hung_up = self.hung_up.clone();
        runtime().spawn(async move {
            let chunk = tokio::select! {
                biased;
                () = hung_up.cancelled() => None,
                chunk = async {
                    match body.lock().await.as_mut() {
                        Some(body) => body.next_chunk().await,
                        None => None,
                    }
                } => chunk,
            };
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
        self.hung_up.cancel();
        lock(&self.sender).take();
        self.stop_answering.abort();
        let body = self.body.clone();
        runtime().spawn(async move {
            body.lock().await.take();
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
