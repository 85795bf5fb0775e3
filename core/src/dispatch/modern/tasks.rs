//! `tasks/get`, `tasks/update` and `tasks/cancel` (the tasks extension), and the answer of a
//! call that became a task.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::answer_typed;
use super::envelope::{Envelope, missing_capability};
use crate::dispatch::SessionShared;
use crate::dispatch::responder::Responder;
use crate::dispatch::server::ServerInner;
use crate::protocol::method::Method;
use crate::tasks::{self, TaskRecord};
use crate::wire::ErrorObject;

/// -32021 naming the extension.
pub(crate) fn extension_missing(why: &str) -> ErrorObject {
    missing_capability(tasks::required_capabilities(), why)
}

/// The answer of a `tools/call` that became a task: the Task, `resultType: "task"`.
pub(crate) fn answer_created(server: &ServerInner, responder: Responder, record: &TaskRecord) {
    let mut result = record.to_wire(false);
    result.insert("resultType".into(), json!("task"));
    answer_typed(server, responder, result);
}

pub(crate) fn handle(
    session: &Arc<SessionShared>,
    responder: Responder,
    method: Method,
    params: Option<Value>,
    envelope: &Envelope,
) {
    // The extension first: a client without it learns that, whatever the id.
    if !tasks::declared(&envelope.client_capabilities) {
        return responder.error(extension_missing(&format!(
            "{} belongs to the tasks extension, which this request did not declare",
            method.name()
        )));
    }
    let params = match params {
        Some(Value::Object(params)) => params,
        _ => Map::new(),
    };
    let Some(id) = params.get("taskId").and_then(Value::as_str) else {
        return responder.error(ErrorObject::invalid_params(format!(
            "Invalid params: {} needs \"taskId\", a string",
            method.name()
        )));
    };
    let server = &session.server;
    let task = match server.tasks.get(id, session.principal.as_deref()) {
        Ok(Some(task)) => task,
        Ok(None) => {
            return responder.error(ErrorObject::invalid_params(format!(
                "Invalid params: no task {id:?} (unknown, expired or not yours)"
            )));
        }
        Err(error) => return responder.error(error),
    };
    match method {
        Method::TasksGet => responder.result(&Value::Object(task.to_wire(true))),
        Method::TasksUpdate => {
            let responses = match params.get("inputResponses") {
                Some(Value::Object(responses)) => responses,
                None | Some(Value::Null) => &Map::new(),
                Some(_) => {
                    return responder.error(ErrorObject::invalid_params(
                        "Invalid params: \"inputResponses\" must be an object",
                    ));
                }
            };
            match server.tasks.answer(&task, responses) {
                Ok(()) => responder.result(&json!({})),
                Err(error) => responder.error(error),
            }
        }
        _ => match server.tasks.cancel(&task.id) {
            Ok(()) => responder.result(&json!({})),
            Err(error) => responder.error(error),
        },
    }
}
