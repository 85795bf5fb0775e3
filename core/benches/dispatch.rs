//! In-process dispatch through the session entry point: parse → route → validate → handler →
//! serialise, for `tools/call echo`, `tools/list` with 100 tools, `ping`, and the parser alone;
//! and a value's JSON text both ways (`json_text` against `Display`).
//! Run: `cargo bench -p toolwire --bench dispatch` (`-- "JSON text"` for the last alone).

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use toolwire::host::json_text;
use toolwire::wire::{Limits, parse_frame};
use toolwire::{Outbound, Server, ServerOptions, Session};

fn connect(rt: &tokio::runtime::Runtime, server: &Server) -> (Session, Outbound) {
    rt.block_on(async {
        let (session, mut outbound) = server.session().unwrap();
        session.handle_frame(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        );
        outbound.recv().await.unwrap();
        session.handle_frame(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (session, outbound)
    })
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The demo server (echo, add, sleep, fail) with the benchmarks' 100 extra tools.
    let server =
        toolwire_demo::build_server_full(ServerOptions::default(), 100).expect("demo server");
    let (session, mut outbound) = connect(&rt, &server);

    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;
    c.bench_function("tools/call echo (round trip)", |b| {
        b.iter(|| {
            rt.block_on(async {
                session.handle_frame(black_box(call));
                black_box(outbound.recv().await.unwrap());
            })
        })
    });

    // The same with the engine's metrics off: what counting costs on the hot path.
    let mut unmetered = ServerOptions::default();
    unmetered.metrics = false;
    let quiet = toolwire_demo::build_server_full(unmetered, 100).expect("demo server");
    let (quiet_session, mut quiet_outbound) = connect(&rt, &quiet);
    c.bench_function("tools/call echo (round trip, metrics off)", |b| {
        b.iter(|| {
            rt.block_on(async {
                quiet_session.handle_frame(black_box(call));
                black_box(quiet_outbound.recv().await.unwrap());
            })
        })
    });

    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    c.bench_function("tools/list 104 tools", |b| {
        b.iter(|| {
            rt.block_on(async {
                session.handle_frame(black_box(list));
                black_box(outbound.recv().await.unwrap());
            })
        })
    });

    let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    c.bench_function("ping", |b| {
        b.iter(|| {
            rt.block_on(async {
                session.handle_frame(black_box(ping));
                black_box(outbound.recv().await.unwrap());
            })
        })
    });

    let limits = Limits::default();
    c.bench_function("parse tools/call frame", |b| {
        b.iter(|| black_box(parse_frame(black_box(call), &limits)))
    });
}

/// A call's arguments, and the bench tools' `give_structured` answer for 1 MiB (16,384 items).
fn json_texts(c: &mut Criterion) {
    let arguments = json!({"city": "Paris", "days": 3, "units": "metric"});
    let items: Vec<Value> = (0..16_384u64)
        .map(|n| json!({"id": n, "name": format!("item-{n:06}"), "tags": ["alpha", "beta", "gamma"]}))
        .collect();
    let structured = json!({ "items": items });
    for (what, value) in [("arguments", &arguments), ("1 MiB structured", &structured)] {
        c.bench_function(&format!("JSON text of {what}: json_text"), |b| {
            b.iter(|| black_box(json_text(black_box(value))))
        });
        c.bench_function(&format!("JSON text of {what}: Display"), |b| {
            b.iter(|| black_box(black_box(value).to_string()))
        });
    }
}

criterion_group!(benches, dispatch, json_texts);
criterion_main!(benches);
