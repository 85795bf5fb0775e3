//! The lifecycle: the `initialize` handshake, `notifications/initialized`, the session's log
//! level, and the handshake a stateless exchange skips.

use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::SessionShared;
use super::responder::Responder;
use super::session::Negotiated;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion};
use crate::wire::ErrorObject;

/// `notifications/initialized`: list changes may be pushed from now on.
pub(super) fn client_initialized(session: &SessionShared) {
    if session.negotiated.get().is_some() {
        // What it sees of each list now: a later change is announced to it only if that
        // changes.
        if session.server.catalog.screens() && !session.initialized.load(Ordering::Acquire) {
            let baseline = session
                .seen
                .clone()
                .baseline(session.server.clone(), session.viewer(None, None));
            super::call::run_task(session, baseline);
        }
        session.initialized.store(true, Ordering::Release);
    }
}

pub(super) fn initialize(session: &SessionShared, responder: Responder, params: Option<Value>) {
    if session.negotiated.get().is_some() {
        return responder.error(ErrorObject::invalid_request(
            "Invalid request: the session is already initialized",
        ));
    }
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let Some(Value::String(requested)) = params.get("protocolVersion") else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: initialize needs \"protocolVersion\" (a string)",
        ));
    };
    let version = ProtocolVersion::parse_handshake(requested).unwrap_or(ProtocolVersion::LATEST);
    let client_capabilities = match params.remove("capabilities") {
        None | Some(Value::Null) => json!({}),
        Some(caps @ Value::Object(_)) => caps,
        Some(_) => {
            return responder.error(ErrorObject::invalid_params(
                "Invalid params: \"capabilities\" must be an object",
            ));
        }
    };
    let client_info = params
        .remove("clientInfo")
        .and_then(|info| serde_json::from_value::<Implementation>(info).ok())
        .unwrap_or_else(|| {
            tracing::warn!("initialize without a valid clientInfo; continuing");
            Implementation::new("unknown", "unknown")
        });
    tracing::debug!(client = %client_info.name, %version, "initialize");
    let negotiated = Negotiated {
        version,
        client_info,
        client_capabilities,
        assumed: false,
    };
    if session.negotiated.set(negotiated).is_err() {
        return responder.error(ErrorObject::invalid_request(
            "Invalid request: the session is already initialized",
        ));
    }
    session.count_live();
    responder.result(&session.server.initialize_result(version));
}

pub(super) fn set_log_level(session: &SessionShared, responder: Responder, params: Option<Value>) {
    let level = params
        .as_ref()
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .and_then(LogLevel::parse);
    match level {
        Some(level) => {
            session.log_level.store(level.index(), Ordering::Relaxed);
            responder.result(&json!({}));
        }
        None => responder.error(ErrorObject::invalid_params(
            "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, alert, emergency",
        )),
    }
}
