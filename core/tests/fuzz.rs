//! Seeded mutation fuzzing of the parser and the session on stable Rust (bounded, for CI):
//! every frame gets a defined answer, every answer is valid JSON-RPC, and the server keeps
//! serving. The coverage-guided version lives in fuzz/ (cargo-fuzz, nightly).

mod common;

use common::Client;
use common::rng::Rng;
use serde_json::{Value, json};
use toolwire::ServerOptions;
use toolwire::wire::{Frame, Limits, parse_frame};

const SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2.5}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1},"_meta":{"progressToken":"p"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"tw1.6563686f"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    r#"{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}"#,
    r#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#,
];

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"\\u0000",
    b"\\ud800",
    b"\xff",
    b"\xc3",
    b"\"id\":null",
    b"\"method\":5",
    b"\"params\":[]",
    b"9999999999999999999999",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                let end = (at + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, token.iter().copied());
            }
            2 if at < bytes.len() => bytes[at] = rng.next() as u8,
            _ => {
                let from = rng.below(bytes.len().max(1));
                let chunk: Vec<u8> = bytes
                    .iter()
                    .skip(from)
                    .take(rng.below(16))
                    .copied()
                    .collect();
                bytes.splice(at..at, chunk);
            }
        }
    }
    bytes
}

#[test]
fn parser_never_panics_on_mutations() {
    let mut rng = Rng(0x5EED_0001);
    let limits = Limits {
        max_frame_bytes: 4096,
        max_depth: 16,
    };
    for i in 0..200_000 {
        let seed = SEEDS[i % SEEDS.len()].as_bytes();
        let frame = mutate(&mut rng, seed);
        // Any outcome is fine; a panic is not.
        match parse_frame(&frame, &limits) {
            Frame::Single(_) | Frame::Batch(_) => {}
        }
    }
}

fn valid_answer(frame: &Value) -> bool {
    let one = |m: &Value| {
        m["jsonrpc"] == "2.0"
            && (m.get("method").is_some_and(Value::is_string)
                || (m.get("id").is_some()
                    && (m.get("result").is_some() ^ m.get("error").is_some())))
            && m.get("error").is_none_or(|e| {
                e["code"].as_i64().is_some_and(|c| c != 0) && e["message"].is_string()
            })
    };
    match frame {
        Value::Array(items) => !items.is_empty() && items.iter().all(one),
        other => one(other),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_answers_mutations_and_keeps_serving() {
    let mut options = ServerOptions::default();
    options.max_frame_bytes = 4096;
    options.max_depth = 16;
    let server = toolwire_demo::build_server_with(options).unwrap();
    let mut rng = Rng(0x5EED_0002);
    for round in 0..20 {
        let mut client = Client::new(&server);
        let version = ["2025-11-25", "2025-03-26"][round % 2];
        client.initialize(version, json!({"roots": {}})).await;
        for i in 0..1000 {
            let seed = SEEDS[i % SEEDS.len()].as_bytes();
            client.send_raw(&mutate(&mut rng, seed));
        }
        // Still serving: this ping is answered (after whatever the mutations produced).
        client.send(&json!({"jsonrpc": "2.0", "id": "final-ping", "method": "ping"}));
        loop {
            let frame = client.recv().await.expect("the session keeps answering");
            assert!(valid_answer(&frame), "invalid outbound frame: {frame}");
            if frame.get("id") == Some(&json!("final-ping")) {
                break;
            }
        }
        for frame in client.finish().await {
            let value: Value = serde_json::from_str(&frame).expect("outbound frames are JSON");
            assert!(valid_answer(&value), "invalid outbound frame: {value}");
        }
    }
}
