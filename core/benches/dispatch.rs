//! In-process dispatch through the session entry point: parse → route → validate → handler →
//! serialise, for `tools/call echo`, `tools/list` with 100 tools, `ping`, and the parser alone.
//! Run: `cargo bench -p toolwire --bench dispatch`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
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

criterion_group!(benches, dispatch);
criterion_main!(benches);
