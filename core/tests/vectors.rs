//! Replays the golden wire vectors in tests/vectors/ against the Rust demo server.

mod common;

use std::path::PathBuf;

use common::{Client, matches, matches_unordered};
use serde_json::Value;
use toolwire::ServerOptions;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
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

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("valid hex in a vector"))
        .collect()
}

async fn run_case(case: &Value) -> Result<(), String> {
    let server = toolwire_demo::build_server_with(server_options(case.get("options")))
        .map_err(|e| format!("demo server: {e}"))?;
    let mut client = Client::new(&server);
    if let Some(version) = case.get("initialize").and_then(Value::as_str) {
        let caps = case
            .get("clientCapabilities")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}));
        let answer = client.initialize(version, caps).await;
        if answer["result"]["protocolVersion"] != version {
            return Err(format!("initialize answered {answer}"));
        }
    }
    let steps = case["steps"].as_array().ok_or("steps must be an array")?;
    for (index, step) in steps.iter().enumerate() {
        let at = |what: String| format!("step {index}: {what}");
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
    let rest = client.finish().await;
    if !rest.is_empty() {
        return Err(format!("unexpected frames after the last step: {rest:?}"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_vectors() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
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
    // Cases are independent sessions: run them all at once, report every failure.
    let runs = cases.iter().map(|case| async move {
        let name = case["name"].as_str().unwrap_or("?").to_owned();
        (name, run_case(case).await)
    });
    let results = futures_util::future::join_all(runs).await;
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    println!(
        "{} vectors replayed, {} failed",
        results.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
