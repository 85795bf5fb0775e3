//! The 2026-07-28 input requests (elicitation, sampling, roots): what a handler asks
//! ([`InputRequired`]) and what each answer must at least hold. Pure data, for every round (a
//! request's and a task's).

use serde_json::{Map, Value, json};

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

/// A handler's answer that it needs the client's input before it can finish (2026-07-28):
/// questions (elicitation, sampling, roots), each under a key unique in this request, and/or
/// a state of the handler's own that comes back, verified, in the next round's
/// [`Context::request_state`](crate::Context::request_state).
///
/// Return it as an error (`Err(InputRequired::new().elicit(..).into())`): tools, prompts and
/// resource reads may; the engine refuses it elsewhere and in a legacy session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputRequired {
    pub(crate) requests: Map<String, Value>,
    pub(crate) state: Option<String>,
}

impl InputRequired {
    /// Nothing asked yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the user (`elicitation/create`; `params` as in the spec) under `key`.
    pub fn elicit(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "elicitation/create", params)
    }

    /// Asks the client's model (`sampling/createMessage`) under `key`.
    pub fn sample(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "sampling/createMessage", params)
    }

    /// Asks for the client's roots (`roots/list`) under `key`.
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, "roots/list", json!({}))
    }

    /// Any input request `{method, params}` under `key`.
    pub fn request(mut self, key: impl Into<String>, method: &str, params: Value) -> Self {
        self.requests
            .insert(key.into(), json!({"method": method, "params": params}));
        self
    }

    /// State for the next round, sealed by the engine (the client sees only ciphertext).
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// Whether it asks nothing and carries nothing.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.state.is_none()
    }
}
