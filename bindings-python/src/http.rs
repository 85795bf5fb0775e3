//! `NativeHttpServer`: a running Streamable HTTP server.

use std::sync::Mutex;

use pyo3::prelude::*;
use toolwire::CancellationToken;
use toolwire::transport::http::HttpServer;

use toolwire::host::runtime;

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
