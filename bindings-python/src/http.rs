//! `NativeHttpServer`: a running Streamable HTTP server, and the bearer-token validator that
//! calls a Python function.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pyo3::prelude::*;
use serde_json::Value;
use toolwire::CancellationToken;
use toolwire::transport::http::{AuthRejection, HttpServer, TokenInfo, TokenValidator};

use crate::convert::to_json;
use crate::runtime::runtime;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeHttpServer {
    pub(crate) url: String,
    pub(crate) stop: CancellationToken,
    pub(crate) server: Mutex<Option<HttpServer>>,
}

#[pymethods]
impl NativeHttpServer {
    /// The endpoint's URL, e.g. `http://127.0.0.1:8000/mcp`.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// Stops accepting; sessions drain their calls, then end (see `wait`).
    fn stop(&self) {
        self.stop.cancel();
    }

    /// Blocks (without the GIL) until the server has stopped and its sessions ended.
    fn wait(&self, py: Python<'_>) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = server {
            py.detach(|| runtime().block_on(server.wait()));
        }
    }
}

/// Calls `validate(token)`: `None` refuses the token (401); `{"subject", "scopes"}` accepts it;
/// `{"error": "insufficient_scope", "scope": "..."}` refuses it with 403.
pub(crate) struct PyTokenValidator {
    pub(crate) func: Arc<Py<PyAny>>,
}

#[async_trait]
impl TokenValidator for PyTokenValidator {
    async fn validate(&self, token: &str) -> Result<TokenInfo, AuthRejection> {
        let func = self.func.clone();
        let token = token.to_owned();
        let verdict = tokio::task::spawn_blocking(move || {
            Python::attach(|py| {
                let result = func.call1(py, (token,))?;
                to_json(result.bind(py))
            })
        })
        .await;
        let value = match verdict {
            Ok(Ok(value)) => value,
            Ok(Err(err)) => {
                tracing::warn!(%err, "the token validator raised; refusing the token");
                return Err(AuthRejection::invalid_token(
                    "the token could not be validated",
                ));
            }
            Err(err) => {
                tracing::warn!(%err, "the token validator's thread failed");
                return Err(AuthRejection::invalid_token(
                    "the token could not be validated",
                ));
            }
        };
        match value {
            Value::Object(map)
                if map.get("error").and_then(Value::as_str) == Some("insufficient_scope") =>
            {
                Err(AuthRejection::insufficient_scope(
                    map.get("scope").and_then(Value::as_str).unwrap_or_default(),
                ))
            }
            Value::Object(map) => Ok(TokenInfo::new(
                map.get("subject")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                map.get("scopes")
                    .and_then(Value::as_array)
                    .map(|s| {
                        s.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            )),
            _ => Err(AuthRejection::invalid_token("invalid token")),
        }
    }
}
