//! MRTR (2026-07-28): a handler that needs the client's input answers `input_required` and
//! is called again with the answers. Re-invocation is the engine's contract: nothing is held
//! between rounds but what travels, sealed, in `requestState`.

use std::sync::Mutex;

use serde_json::{Map, Value, json};

use super::state::{Binding, Carried, Sealer, canonical_json, hex_digest};
use crate::protocol::InputRequired;
use crate::protocol::input::check_response_shape;
use crate::wire::ErrorObject;

/// The client capability an input request needs.
pub(crate) fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Why a handler stopped short of an answer, recorded on its round: what the engine answers
/// even if the handler's own code swallowed the error it was given.
#[derive(Debug)]
pub(crate) enum Signal {
    /// Questions to ask (replay-style `ctx.elicit` et al.).
    Ask,
    /// A capability the request lacks: `-32021` with these `requiredCapabilities`.
    MissingCapability(Value),
}

/// One modern round of a tool call, prompt or read: what the client sent back, and what the
/// handler asked meanwhile.
#[derive(Debug, Default)]
pub(crate) struct Round {
    /// This request's `inputResponses`.
    pub(crate) responses: Map<String, Value>,
    /// What the sealed `requestState` carried.
    pub(crate) carried: Carried,
    /// Questions asked this round, by key.
    asked: Mutex<Map<String, Value>>,
    /// Answers taken from `responses` this round for questions asked earlier: carried on.
    answered: Mutex<Map<String, Value>>,
    signal: Mutex<Option<Signal>>,
}

impl Round {
    /// The round a request opens: its `inputResponses` (an object of objects, else `-32602`)
    /// and its `requestState` (opened for `binding`, else `-32602`).
    pub(crate) fn open(
        params: &Map<String, Value>,
        sealer: &Sealer,
        binding: &Binding,
    ) -> Result<Round, ErrorObject> {
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) if map.values().all(Value::is_object) => map.clone(),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: \"inputResponses\" must map each key to a result object",
                ));
            }
        };
        let carried = match params.get("requestState") {
            None | Some(Value::Null) => Carried::default(),
            Some(Value::String(text)) => sealer.open(text, binding)?,
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: \"requestState\" must be a string",
                ));
            }
        };
        Ok(Round {
            responses,
            carried,
            ..Round::default()
        })
    }

    /// The answer to a replay-style question, from this round's responses or earlier rounds';
    /// otherwise the question is recorded and `None` comes back.
    pub(crate) fn answer_or_ask(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Option<Value>, ErrorObject> {
        if let Some(answer) = self.answered(method, params)? {
            return Ok(Some(answer));
        }
        let key = question_key(method, params);
        lock(&self.asked).insert(key, json!({"method": method, "params": params}));
        self.raise(Signal::Ask);
        Ok(None)
    }

    /// The answer this round or an earlier one brought to the question, if any (nothing is
    /// recorded when there is none).
    pub(crate) fn answered(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Option<Value>, ErrorObject> {
        let key = question_key(method, params);
        if let Some(answer) = self.carried.answers.get(&key) {
            return Ok(Some(answer.clone()));
        }
        if let Some(answer) = self.responses.get(&key) {
            check_response_shape(method, &key, answer)?;
            lock(&self.answered).insert(key, answer.clone());
            return Ok(Some(answer.clone()));
        }
        Ok(None)
    }

    pub(crate) fn raise(&self, signal: Signal) {
        let mut slot = lock(&self.signal);
        // A missing capability outranks questions: it is the answer the client can act on.
        if !matches!(*slot, Some(Signal::MissingCapability(_))) {
            *slot = Some(signal);
        }
    }

    pub(crate) fn has_signal(&self) -> bool {
        lock(&self.signal).is_some()
    }

    pub(crate) fn take_signal(&self) -> Option<Signal> {
        lock(&self.signal).take()
    }

    /// The questions recorded by replay-style calls, with the state that carries every answer
    /// so far, as one [`InputRequired`].
    pub(crate) fn pending(&self) -> InputRequired {
        InputRequired {
            requests: std::mem::take(&mut *lock(&self.asked)),
            state: None,
        }
    }

    /// What the next round must carry: the answers gathered so far and the handler's state.
    pub(crate) fn carry_on(&self, user: Option<String>) -> Carried {
        let mut answers = self.carried.answers.clone();
        answers.extend(lock(&self.answered).clone());
        Carried { user, answers }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The key a replay-style question goes under: a digest of the question itself, so the same
/// question asked again in the next round finds its answer.
pub(crate) fn question_key(method: &str, params: &Value) -> String {
    let digest = hex_digest(canonical_json(&json!({"m": method, "p": params})).as_bytes());
    format!("tw-{}", &digest[..16])
}

/// The input requests the client can take on this request: those of kinds (and, for URL-mode
/// elicitation, modes) it declared. Returns the kept requests and what the dropped ones need.
pub(crate) fn keep_declared(
    requests: Map<String, Value>,
    capabilities: &Value,
) -> (Map<String, Value>, Vec<&'static str>) {
    let mut dropped = Vec::new();
    let kept = requests
        .into_iter()
        .filter(|(_, request)| {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let url_mode = method == "elicitation/create"
                && request.pointer("/params/mode").and_then(Value::as_str) == Some("url");
            let needs_url = url_mode
                && capabilities
                    .get("elicitation")
                    .and_then(|e| e.get("url"))
                    .is_none();
            match capability_of(method) {
                Some(_) if needs_url && capabilities.get("elicitation").is_some() => {
                    if !dropped.contains(&"elicitation.url") {
                        dropped.push("elicitation.url");
                    }
                    false
                }
                Some(cap) if capabilities.get(cap).is_none() => {
                    if !dropped.contains(&cap) {
                        dropped.push(cap);
                    }
                    false
                }
                _ => true,
            }
        })
        .collect();
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::dispatch::modern::state::StateKeys;

    fn sealer() -> Sealer {
        Sealer::new(
            StateKeys::ephemeral().expect("keys"),
            Duration::from_secs(60),
            65536,
            "server",
        )
    }

    #[test]
    fn a_replayed_question_finds_its_answer_in_the_next_round() {
        let sealer = sealer();
        let binding = Binding::new("tools/call", "t", &json!({}), None);
        let question = json!({"message": "Name?", "requestedSchema": {"type": "object"}});
        let first = Round::open(&Map::new(), &sealer, &binding).expect("round 1");
        assert_eq!(
            first.answer_or_ask("elicitation/create", &question),
            Ok(None)
        );
        assert!(matches!(first.take_signal(), Some(Signal::Ask)));
        let asked = first.pending();
        let key = asked.requests.keys().next().expect("a key").clone();
        let state = sealer.seal(&binding, first.carry_on(None)).expect("seal");

        let mut params = Map::new();
        params.insert(
            "inputResponses".into(),
            json!({ &key: {"action": "accept", "content": {"n": "Ann"}} }),
        );
        params.insert("requestState".into(), json!(state));
        let second = Round::open(&params, &sealer, &binding).expect("round 2");
        let answer = second
            .answer_or_ask("elicitation/create", &question)
            .expect("valid");
        assert_eq!(answer.expect("answered")["content"]["n"], "Ann");
        assert!(second.take_signal().is_none());
        // The answer rides on in the state of any later round.
        assert!(second.carry_on(None).answers.contains_key(&key));
    }

    #[test]
    fn malformed_responses_are_refused() {
        let sealer = sealer();
        let binding = Binding::new("tools/call", "t", &json!({}), None);
        let mut params = Map::new();
        params.insert("inputResponses".into(), json!({"k": "garbage"}));
        assert!(Round::open(&params, &sealer, &binding).is_err());
        let question = json!({"message": "?"});
        let key = question_key("elicitation/create", &question);
        params.insert("inputResponses".into(), json!({ &key: {"nonsense": true} }));
        let round = Round::open(&params, &sealer, &binding).expect("objects");
        assert!(
            round
                .answer_or_ask("elicitation/create", &question)
                .is_err()
        );
    }

    #[test]
    fn undeclared_kinds_are_dropped() {
        let asked = InputRequired::new()
            .elicit("a", json!({}))
            .sample("b", json!({}))
            .list_roots("c");
        let (kept, dropped) = keep_declared(asked.requests, &json!({"elicitation": {}}));
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(dropped, ["sampling", "roots"]);
        let url = InputRequired::new().elicit("u", json!({"mode": "url", "url": "https://x"}));
        let (kept, dropped) = keep_declared(url.requests.clone(), &json!({"elicitation": {}}));
        assert!(kept.is_empty());
        assert_eq!(dropped, ["elicitation.url"]);
        let (kept, _) = keep_declared(url.requests, &json!({"elicitation": {"url": {}}}));
        assert_eq!(kept.len(), 1);
    }
}
