//! The one place where the engine's errors become Python exceptions.
//!
//! ```text
//! ToolwireError
//! ├── RegistrationError      a definition was refused (tool, resource, template, prompt, completion)
//! ├── CapabilityError        the client did not declare what a request to it needs
//! ├── ClientRequestError     the client answered a request with an error (.code, .data)
//! ├── SessionClosedError     the session ended first
//! ├── TransportError         reading or writing the transport failed
//! └── BusyError              what the operation needs is in use (stdin served twice)
//! ```
//! A timed-out request to the client raises the built-in `TimeoutError`; a cancelled one
//! `asyncio.CancelledError`. `InputRequiredError` (2026-07-28: the client's answer is needed
//! first) derives from `BaseException`, so `except Exception` cannot swallow it.

use pyo3::create_exception;
use pyo3::exceptions::asyncio::CancelledError;
use pyo3::exceptions::{
    PyBaseException, PyException, PyRuntimeError, PyTimeoutError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    toolwire,
    ToolwireError,
    PyException,
    "Base class of the engine's errors."
);
create_exception!(
    toolwire,
    RegistrationError,
    ToolwireError,
    "A definition (tool, resource, resource template, prompt, completion) was refused."
);
create_exception!(
    toolwire,
    CapabilityError,
    ToolwireError,
    "The client did not declare a needed capability."
);
create_exception!(
    toolwire,
    ClientRequestError,
    ToolwireError,
    "The client answered a request with an error."
);
create_exception!(
    toolwire,
    SessionClosedError,
    ToolwireError,
    "The session ended first."
);
create_exception!(
    toolwire,
    TransportError,
    ToolwireError,
    "Reading or writing the transport failed."
);

create_exception!(
    toolwire,
    BusyError,
    ToolwireError,
    "What the operation needs is already in use: stdin is served by one serve at a time."
);

create_exception!(
    toolwire,
    InputRequiredError,
    PyBaseException,
    "2026-07-28: the client's input is needed first. ctx.elicit, ctx.sample and ctx.list_roots \
     raise it when the answer is not in this round; let it end the tool: the engine asks the \
     client, who calls again, and the same line then has its answer."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ToolwireError", py.get_type::<ToolwireError>())?;
    m.add("RegistrationError", py.get_type::<RegistrationError>())?;
    m.add("CapabilityError", py.get_type::<CapabilityError>())?;
    m.add("ClientRequestError", py.get_type::<ClientRequestError>())?;
    m.add("SessionClosedError", py.get_type::<SessionClosedError>())?;
    m.add("TransportError", py.get_type::<TransportError>())?;
    m.add("BusyError", py.get_type::<BusyError>())?;
    m.add("InputRequiredError", py.get_type::<InputRequiredError>())?;
    Ok(())
}

pub(crate) fn to_py_err(err: toolwire::Error) -> PyErr {
    use toolwire::Error as E;
    let message = err.to_string();
    match err {
        E::InvalidToolName { .. }
        | E::DuplicateTool { .. }
        | E::InvalidSchema { .. }
        | E::InvalidDefinition { .. } => RegistrationError::new_err(message),
        E::CapabilityNotSupported { .. } | E::NoBackChannel { .. } => {
            CapabilityError::new_err(message)
        }
        E::Timeout { .. } | E::NoAnswer { .. } => PyTimeoutError::new_err(message),
        E::Cancelled => CancelledError::new_err(message),
        E::Closed => SessionClosedError::new_err(message),
        E::Peer(error) => {
            let err = ClientRequestError::new_err(error.message.to_string());
            Python::attach(|py| {
                let value = err.value(py);
                let _ = value.setattr("code", error.code.0);
                if let Some(data) = &error.data
                    && let Ok(data) = crate::convert::to_py(py, data)
                {
                    let _ = value.setattr("data", data);
                }
            });
            err
        }
        E::Transport(_) | E::NoRuntime(_) => TransportError::new_err(message),
        E::Lifespan(_) => PyRuntimeError::new_err(message),
        E::InvalidArgument(_) | E::InvalidResult { .. } => PyValueError::new_err(message),
        E::Busy(_) => BusyError::new_err(message),
        E::InputRequired => InputRequiredError::new_err(message),
        _ => ToolwireError::new_err(message),
    }
}
