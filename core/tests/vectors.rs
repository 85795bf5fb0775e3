//! Replays the golden wire vectors in tests/vectors/ against the Rust demo server.

mod common;

use std::collections::HashMap;
use std::path::PathBuf as FilePath;

use std::time::Duration;

use common::{matches, matches_unordered};
use serde_json::{Value, json};
use toolwire::transport::memory::{self, MemoryReceiver, MemorySender};
use toolwire::{Error, Outbound, Server, ServerOptions, Session};

/// How the runner reaches the server: both paths must give the same wire behaviour.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// The bring-your-own-transport entry point (what the bindings replay through).
    Session,
    /// `Server::serve` over the in-memory transport pair (the serve loop, as stdio uses it).
    Memory,
}

enum Io {
    Session(Session, Outbound),
    Memory(
        MemorySender,
        MemoryReceiver,
        tokio::task::JoinHandle<Result<(), Error>>,
    ),
}

impl Io {
    fn connect(server: &Server, path: Path) -> Io {
        match path {
            Path::Session => {
                let (session, outbound) = server.session().expect("runtime");
                Io::Session(session, outbound)
            }
            Path::Memory => {
                let (ours, theirs) = memory::pair();
                let server = server.clone();
                let serve = tokio::spawn(async move { server.serve(theirs).await });
                let (tx, rx) = ours.into_parts();
                Io::Memory(tx, rx, serve)
            }
        }
    }

    fn send_raw(&self, bytes: &[u8]) {
        match self {
            Io::Session(session, _) => session.handle_frame(bytes),
            Io::Memory(tx, _, _) => {
                tx.send(bytes.to_vec());
            }
        }
    }

    fn send(&self, message: &Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    async fn recv(&mut self) -> Result<Value, String> {
        let next = async {
            match self {
                Io::Session(_, outbound) => outbound.recv().await,
                Io::Memory(_, rx, _) => rx
                    .recv()
                    .await
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), next).await {
            Err(_) => Err("no frame within 10 s".into()),
            Ok(None) => Err("the session ended".into()),
            Ok(Some(frame)) => serde_json::from_str(&frame)
                .map_err(|e| format!("server sent invalid JSON ({e}): {frame}")),
        }
    }

    /// Ends the input (EOF), lets the server drain, and returns whatever else it sent.
    async fn finish(self) -> Result<Vec<String>, String> {
        let mut rest = Vec::new();
        match self {
            Io::Session(session, mut outbound) => {
                session.shutdown().await;
                while let Some(frame) = outbound.recv().await {
                    rest.push(frame);
                }
            }
            Io::Memory(tx, mut rx, serve) => {
                drop(tx);
                while let Some(frame) = rx.recv().await {
                    rest.push(String::from_utf8_lossy(&frame).into_owned());
                }
                match serve.await {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => return Err(format!("serve ended with {err}")),
                    Err(err) => return Err(format!("serve task failed: {err}")),
                }
            }
        }
        Ok(rest)
    }
}

fn vectors_dir() -> FilePath {
    FilePath::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn server_options(options: Option<&Value>) -> ServerOptions {
    let mut out = ServerOptions::default();
    let Some(options) = options else { return out };
    if let Some(n) = options.get("pageSize").and_then(Value::as_u64) {
        out.page_size = Some(n as usize);
    }
    if let Some(n) = options.get("maxFrameBytes").and_then(Value::as_u64) {
        out.max_frame_bytes = n as usize;
    }
    if let Some(n) = options.get("maxDepth").and_then(Value::as_u64) {
        out.max_depth = n as usize;
    }
    out
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

/// The server a case runs against: the demo of the shared contract, or the conformance server
/// (its tasks-extension fixtures).
fn build_server(case: &Value) -> Result<Server, String> {
    let options = server_options(case.get("options"));
    match case.get("server").and_then(Value::as_str) {
        None | Some("demo") => toolwire_demo::build_server_with(options),
        Some("conformance") if case.get("options").is_some() => {
            return Err("the conformance server takes no options here".into());
        }
        Some("conformance") => toolwire_demo::conformance::build_conformance_server(),
        Some(other) => return Err(format!("unknown server {other:?}")),
    }
    .map_err(|e| format!("server: {e}"))
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("valid hex in a vector"))
        .collect()
}

async fn run_case(case: &Value, path: Path) -> Result<(), String> {
    let server = build_server(case)?;
    let mut client = Io::connect(&server, path);
    let mut captured = Captured::default();
    if let Some(version) = case.get("initialize").and_then(Value::as_str) {
        let caps = case
            .get("clientCapabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        client.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": caps,
                       "clientInfo": {"name": "vector-runner", "version": "1.0"}}
        }));
        let answer = client.recv().await?;
        if answer["result"]["protocolVersion"] != version {
            return Err(format!("initialize answered {answer}"));
        }
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    let steps = case["steps"].as_array().ok_or("steps must be an array")?;
    for (index, step) in steps.iter().enumerate() {
        let at = |what: String| format!("step {index}: {what}");
        let step = &captured.resolve(step).map_err(&at)?;
        if let Some(message) = step.get("send") {
            client.send(message);
        } else if let Some(text) = step.get("sendRaw").and_then(Value::as_str) {
            client.send_raw(text.as_bytes());
        } else if let Some(hex) = step.get("sendHex").and_then(Value::as_str) {
            client.send_raw(&hex_bytes(hex));
        } else if let Some(pattern) = step.get("expect") {
            let got = client.recv().await.map_err(&at)?;
            if !matches(pattern, &got) {
                return Err(at(format!("expected {pattern}\n     got {got}")));
            }
            captured.record(pattern, &got).map_err(&at)?;
        } else if let Some(patterns) = step.get("expectUnordered").and_then(Value::as_array) {
            let mut got = Vec::new();
            for _ in patterns {
                got.push(client.recv().await.map_err(&at)?);
            }
            if !matches_unordered(patterns, &got) {
                return Err(at(format!(
                    "expected (any order) {patterns:?}\n     got {got:?}"
                )));
            }
        } else if let Some(patterns) = step.get("expectUnorderedArray").and_then(Value::as_array) {
            let got = client.recv().await.map_err(&at)?;
            let ok = got
                .as_array()
                .is_some_and(|items| matches_unordered(patterns, items));
            if !ok {
                return Err(at(format!(
                    "expected an array of (any order) {patterns:?}\n     got {got}"
                )));
            }
        } else if let Some(each) = step.get("collect") {
            let min = step.get("min").and_then(Value::as_u64).unwrap_or(0);
            let max = step.get("max").and_then(Value::as_u64).unwrap_or(u64::MAX);
            let until = step
                .get("until")
                .ok_or_else(|| at("collect needs until".into()))?;
            let mut seen = 0;
            loop {
                let got = client.recv().await.map_err(&at)?;
                if matches(until, &got) {
                    captured.record(until, &got).map_err(&at)?;
                    break;
                }
                if !matches(each, &got) {
                    return Err(at(format!("expected {each} or {until}\n     got {got}")));
                }
                seen += 1;
            }
            if seen < min || seen > max {
                return Err(at(format!(
                    "collected {seen} frames, expected {min}..={max}"
                )));
            }
        } else {
            return Err(at(format!("unknown step {step}")));
        }
    }
    let rest = client.finish().await?;
    if !rest.is_empty() {
        return Err(format!("unexpected frames after the last step: {rest:?}"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_vectors() {
    let mut files: Vec<FilePath> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable vector file");
        let doc: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", file.display()));
        for case in doc["cases"].as_array().expect("cases array") {
            cases.push(case.clone());
        }
    }
    assert!(cases.len() >= 60, "only {} vectors", cases.len());
    // Cases are independent sessions: run them all at once, over both paths, and report
    // every failure.
    let runs = cases.iter().flat_map(|case| {
        [Path::Session, Path::Memory].map(|path| async move {
            let name = format!("{} [{path:?}]", case["name"].as_str().unwrap_or("?"));
            (name, run_case(case, path).await)
        })
    });
    let results = futures_util::future::join_all(runs).await;
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    println!(
        "{} vector runs ({} cases over 2 paths), {} failed",
        results.len(),
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
