//! The answers a client gives to the 2026-07-28 input requests (elicitation, sampling, roots):
//! what each must at least hold. Pure data, for every round (a request's and a task's).

use serde_json::Value;

use crate::wire::ErrorObject;

/// The minimal shape of each kind's answer, so a handler never gets garbage as an answer.
pub(crate) fn check_response_shape(
    method: &str,
    key: &str,
    answer: &Value,
) -> Result<(), ErrorObject> {
    let ok = match method {
        "elicitation/create" => answer
            .get("action")
            .and_then(Value::as_str)
            .is_some_and(|a| matches!(a, "accept" | "decline" | "cancel")),
        "sampling/createMessage" => answer.get("content").is_some() && answer.get("role").is_some(),
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ErrorObject::invalid_params(format!(
            "Invalid params: inputResponses[{key:?}] is not a valid answer to {method}"
        )))
    }
}
