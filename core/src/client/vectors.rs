//! The golden wire vectors (`tests/vectors/README.md`) replayed against a server, frame by
//! frame: the one reader of their format, which every language's test suite calls with its own
//! demo server.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::dispatch::{Outbound, Session};

/// How long a step waits for the frame it expects before the case fails.
const FRAME_WAIT: Duration = Duration::from_secs(10);

/// The frames between the replayer and a server.
#[allow(
    async_fn_in_trait,
    reason = "implemented and awaited by the replayer's callers only"
)]
pub trait Wire {
    /// Sends one frame, byte for byte.
    fn send(&mut self, frame: &[u8]);
    /// The next frame the server sent; `None` once it will send no more.
    async fn recv(&mut self) -> Option<String>;
    /// Ends the input (EOF), lets the server drain, and returns what else it sent.
    async fn finish(self) -> Result<Vec<String>, String>;
    /// Ends the server's side at once after a failed step: no call it started keeps running.
    fn abort(self);
}

/// A server's session as the replayer's wire: the bring-your-own-transport entry point every
/// binding's session is.
pub struct SessionWire {
    session: Session,
    outbound: Outbound,
}

impl SessionWire {
    /// The wire over `session` and its `outbound` frames.
    pub fn new(session: Session, outbound: Outbound) -> Self {
        SessionWire { session, outbound }
    }
}

impl Wire for SessionWire {
    fn send(&mut self, frame: &[u8]) {
        self.session.handle_frame(frame);
    }

    async fn recv(&mut self) -> Option<String> {
        self.outbound.recv().await
    }

    fn abort(self) {
        self.session.close();
    }

    async fn finish(mut self) -> Result<Vec<String>, String> {
        self.session.shutdown().await;
        let mut rest = Vec::new();
        while let Some(frame) = self.outbound.recv().await {
            rest.push(frame);
        }
        Ok(rest)
    }
}

/// Replays one case (an element of a vector file's `cases`) over `wire`; the error says which
/// step failed and how. The server must be the one the case names (`server`, `options`).
pub async fn replay<W: Wire>(mut wire: W, case: &Value) -> Result<(), String> {
    if let Err(failure) = run_steps(&mut wire, case).await {
        wire.abort();
        return Err(failure);
    }
    let rest = wire.finish().await?;
    if !rest.is_empty() {
        return Err(format!("unexpected frames after the last step: {rest:?}"));
    }
    Ok(())
}

async fn run_steps<W: Wire>(wire: &mut W, case: &Value) -> Result<(), String> {
    let mut captured = Captured::default();
    if let Some(version) = case.get("initialize").and_then(Value::as_str) {
        let capabilities = case
            .get("clientCapabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        send(
            wire,
            &json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": capabilities,
                           "clientInfo": {"name": "vector-runner", "version": "1.0"}}
            }),
        );
        let answer = next(wire).await?;
        if answer["result"]["protocolVersion"] != version {
            return Err(format!("initialize answered {answer}"));
        }
        send(
            wire,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
    }
    let steps = case
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("steps must be an array")?;
    for (index, step) in steps.iter().enumerate() {
        let at = |what: String| format!("step {index}: {what}");
        let step = captured.resolve(step).map_err(at)?;
        run_step(wire, &step, &mut captured).await.map_err(at)?;
    }
    Ok(())
}

async fn run_step<W: Wire>(
    wire: &mut W,
    step: &Value,
    captured: &mut Captured,
) -> Result<(), String> {
    if let Some(message) = step.get("send") {
        send(wire, message);
    } else if let Some(text) = step.get("sendRaw").and_then(Value::as_str) {
        wire.send(text.as_bytes());
    } else if let Some(hex) = step.get("sendHex").and_then(Value::as_str) {
        wire.send(&hex_bytes(hex)?);
    } else if let Some(pattern) = step.get("expect") {
        let got = next(wire).await?;
        if !matches(pattern, &got) {
            return Err(format!("expected {pattern}\n     got {got}"));
        }
        captured.record(pattern, &got)?;
    } else if let Some(patterns) = step.get("expectUnordered").and_then(Value::as_array) {
        let mut got = Vec::new();
        for _ in patterns {
            got.push(next(wire).await?);
        }
        if !matches_unordered(patterns, &got) {
            return Err(format!(
                "expected (any order) {patterns:?}\n     got {got:?}"
            ));
        }
    } else if let Some(patterns) = step.get("expectUnorderedArray").and_then(Value::as_array) {
        let got = next(wire).await?;
        if !got
            .as_array()
            .is_some_and(|items| matches_unordered(patterns, items))
        {
            return Err(format!(
                "expected an array of (any order) {patterns:?}\n     got {got}"
            ));
        }
    } else if let Some(each) = step.get("collect") {
        let min = step.get("min").and_then(Value::as_u64).unwrap_or(0);
        let max = step.get("max").and_then(Value::as_u64).unwrap_or(u64::MAX);
        let until = step.get("until").ok_or("collect needs until")?;
        let mut seen = 0;
        loop {
            let got = next(wire).await?;
            if matches(until, &got) {
                captured.record(until, &got)?;
                break;
            }
            if !matches(each, &got) {
                return Err(format!("expected {each} or {until}\n     got {got}"));
            }
            seen += 1;
        }
        if seen < min || seen > max {
            return Err(format!("collected {seen} frames, expected {min}..={max}"));
        }
    } else {
        return Err(format!("unknown step {step}"));
    }
    Ok(())
}

fn send<W: Wire>(wire: &mut W, message: &Value) {
    wire.send(message.to_string().as_bytes());
}

async fn next<W: Wire>(wire: &mut W) -> Result<Value, String> {
    match tokio::time::timeout(FRAME_WAIT, wire.recv()).await {
        Err(_) => Err(format!("no frame within {} s", FRAME_WAIT.as_secs())),
        Ok(None) => Err("the session ended".into()),
        Ok(Some(frame)) => serde_json::from_str(&frame)
            .map_err(|e| format!("server sent invalid JSON ({e}): {frame}")),
    }
}

fn hex_bytes(hex: &str) -> Result<Vec<u8>, String> {
    let invalid = || format!("sendHex: {hex:?} is not hex");
    if !hex.len().is_multiple_of(2) {
        return Err(invalid());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(invalid)
        })
        .collect()
}

/// Whether `actual` matches `pattern`: objects with the same keys, arrays of the same length,
/// scalars equal (numbers by value); `"$any"`, `"$string"`, `"$number"`, `"$prefix:abc"` and
/// `"$capture:NAME"` as the vectors' README says.
pub fn matches(pattern: &Value, actual: &Value) -> bool {
    match (pattern, actual) {
        (Value::String(p), _) if p == "$any" => true,
        (Value::String(p), Value::String(_)) if p == "$string" => true,
        (Value::String(p), Value::Number(_)) if p == "$number" => true,
        (Value::String(p), Value::String(_)) if p.starts_with("$capture:") => true,
        (Value::String(p), Value::String(a)) if p.starts_with("$prefix:") => {
            a.starts_with(&p["$prefix:".len()..])
        }
        (Value::Object(p), Value::Object(a)) => {
            p.len() == a.len()
                && p.iter()
                    .all(|(k, pv)| a.get(k).is_some_and(|av| matches(pv, av)))
        }
        (Value::Array(p), Value::Array(a)) => {
            p.len() == a.len() && p.iter().zip(a).all(|(pv, av)| matches(pv, av))
        }
        (Value::Number(p), Value::Number(a)) => {
            match (p.as_i64(), a.as_i64(), p.as_u64(), a.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => p.as_f64() == a.as_f64(),
            }
        }
        _ => pattern == actual,
    }
}

/// Whether `actual` matches `patterns` in some order, each pattern used once (every pairing
/// tried: a loose pattern such as `"$any"` never takes the item a stricter one needed).
pub fn matches_unordered(patterns: &[Value], actual: &[Value]) -> bool {
    fn pair(patterns: &[Value], actual: &[Value], used: &mut [bool]) -> bool {
        let Some((pattern, rest)) = patterns.split_first() else {
            return true;
        };
        for i in 0..actual.len() {
            if !used[i] && matches(pattern, &actual[i]) {
                used[i] = true;
                if pair(rest, actual, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    patterns.len() == actual.len() && pair(patterns, actual, &mut vec![false; actual.len()])
}

/// Strings a case captured in an expectation (`"$capture:NAME"`, e.g. a task id) and uses in
/// later steps (`"$var:NAME"`, in what it sends and what it expects).
#[derive(Default)]
struct Captured(HashMap<String, String>);

impl Captured {
    /// `value` with each `"$var:NAME"` replaced by what NAME captured.
    fn resolve(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) => match text.strip_prefix("$var:") {
                Some(name) => Value::String(
                    self.0
                        .get(name)
                        .cloned()
                        .ok_or_else(|| format!("{text}: nothing captured as {name:?} yet"))?,
                ),
                None => value.clone(),
            },
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.resolve(item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, item)| Ok((key.clone(), self.resolve(item)?)))
                    .collect::<Result<_, String>>()?,
            ),
            _ => value.clone(),
        })
    }

    /// After `actual` matched `pattern`: records what each `"$capture:NAME"` stood for. A name
    /// captured twice must stand for the same string both times.
    fn record(&mut self, pattern: &Value, actual: &Value) -> Result<(), String> {
        match (pattern, actual) {
            (Value::String(p), Value::String(a)) => {
                if let Some(name) = p.strip_prefix("$capture:") {
                    let known = self.0.entry(name.to_owned()).or_insert_with(|| a.clone());
                    if known != a {
                        return Err(format!("{name:?} was {known:?}, now {a:?}"));
                    }
                }
            }
            (Value::Array(p), Value::Array(a)) => {
                for (p, a) in p.iter().zip(a) {
                    self.record(p, a)?;
                }
            }
            (Value::Object(p), Value::Object(a)) => {
                for (key, p) in p {
                    if let Some(a) = a.get(key) {
                        self.record(p, a)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Server;

    fn case(expect: Value) -> Value {
        json!({"name": "t", "initialize": "2025-11-25", "steps": [
            {"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
            {"expect": expect},
        ]})
    }

    async fn replay_on_a_server(case: &Value) -> Result<(), String> {
        let server = Server::builder("vectors", "1")
            .build()
            .map_err(|e| e.to_string())?;
        let (session, outbound) = server.session().map_err(|e| e.to_string())?;
        replay(SessionWire::new(session, outbound), case).await
    }

    #[tokio::test]
    async fn a_case_that_holds_passes_and_one_that_does_not_names_its_step() {
        let holds = case(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(replay_on_a_server(&holds).await, Ok(()));
        let wrong = case(json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
        let failure = replay_on_a_server(&wrong).await.unwrap_err();
        assert!(failure.starts_with("step 1: expected"), "{failure}");
    }

    #[tokio::test]
    async fn frames_after_the_last_step_fail_the_case() {
        let unread = json!({"name": "t", "steps": [
            {"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
        ]});
        let failure = replay_on_a_server(&unread).await.unwrap_err();
        assert!(
            failure.contains("unexpected frames after the last step"),
            "{failure}"
        );
    }

    #[test]
    fn patterns() {
        assert!(matches(&json!({"a": "$number"}), &json!({"a": 1.5})));
        assert!(!matches(&json!({"a": "$number"}), &json!({"a": "1"})));
        assert!(!matches(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(matches(&json!("$prefix:ab"), &json!("abc")));
        assert!(matches(&json!(1), &json!(1.0)));
        assert!(matches_unordered(
            &[json!(1), json!("$string")],
            &[json!("x"), json!(1)]
        ));
        assert!(!matches_unordered(
            &[json!(1), json!(1)],
            &[json!(1), json!(2)]
        ));
        // The loose pattern first must not take the item the strict one needs.
        assert!(matches_unordered(
            &[json!("$any"), json!(1)],
            &[json!(1), json!("x")]
        ));
        assert!(hex_bytes("0g").is_err() && hex_bytes("abc").is_err());
        assert_eq!(hex_bytes("ff00"), Ok(vec![255, 0]));
    }
}
