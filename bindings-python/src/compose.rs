//! `NativeMount`: another server's catalog mounted under a prefix (core's `compose`). Only
//! types are converted here; connecting and forwarding are core's, run without the GIL.

use pyo3::prelude::*;
use toolwire::compose::Mount;
use toolwire::host::runtime;

use crate::errors::to_py_err;

#[pyclass(frozen, module = "toolwire._native")]
pub(crate) struct NativeMount {
    pub(crate) mount: Mount,
}

#[pymethods]
impl NativeMount {
    /// The prefix.
    #[getter]
    fn prefix(&self) -> String {
        self.mount.prefix().to_owned()
    }

    /// The names and URIs it registered, as this server's clients see them.
    fn registered(&self) -> Vec<String> {
        self.mount.registered()
    }

    /// Reads the upstream's lists again.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let mount = self.mount.clone();
        py.detach(|| runtime().block_on(async move { mount.refresh().await }))
            .map_err(to_py_err)
    }

    /// Takes what it registered off the server and ends the connection.
    fn unmount(&self, py: Python<'_>) {
        let mount = self.mount.clone();
        py.detach(|| runtime().block_on(async move { mount.unmount().await }));
    }
}
