//! In-process dispatch through the session entry point: parse → route → validate → handler →
//! serialise, for `tools/call echo`, `tools/list` with 100 tools, `ping`, and the parser alone;
//! and a value's JSON text both ways (`json_text` against `Display`).
//! And `tools/call search_tools` at 10,000 tools, with its index built and building it.
//! Run: `cargo bench -p toolwire --bench dispatch` (`-- "JSON text"` for those alone,
//! `-- search` for the search).

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

/// Tool search at 10,000 tools named `{service}_{verb}_{thing}` from the word lists of
/// `bench/search/catalog.py` (simpler texts: two arguments each): a search round trip with the
/// index built, and one that builds it first (the catalog changed since the last search).
fn search(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let services = [
        "stripe",
        "github",
        "jira",
        "slack",
        "salesforce",
        "zendesk",
        "hubspot",
        "notion",
        "gdrive",
        "shopify",
    ];
    let verbs = [
        "get",
        "list",
        "create",
        "update",
        "delete",
        "search",
        "export",
        "import",
        "archive",
        "restore",
        "send",
        "assign",
        "approve",
        "reject",
        "merge",
        "tag",
        "share",
        "schedule",
        "summarize",
        "sync",
    ];
    let things = [
        "invoice",
        "customer",
        "order",
        "email",
        "image",
        "file",
        "ticket",
        "event",
        "report",
        "user",
        "payment",
        "shipment",
        "refund",
        "subscription",
        "comment",
        "issue",
        "branch",
        "channel",
        "message",
        "contact",
        "lead",
        "deal",
        "task",
        "project",
        "page",
        "folder",
        "product",
        "coupon",
        "review",
        "webhook",
        "team",
        "role",
        "note",
        "meeting",
        "survey",
        "campaign",
        "quote",
        "contract",
        "asset",
        "label",
        "milestone",
        "release",
        "account",
        "address",
        "receipt",
        "budget",
        "forecast",
        "policy",
        "dashboard",
        "alert",
    ];
    let answer = |_ctx: toolwire::Context, _args: Value| async {
        Ok::<_, toolwire::ToolError>(toolwire::ToolOutput::text("done"))
    };
    let mut builder = Server::builder("search", "1");
    for service in services {
        for verb in verbs {
            for thing in things {
                let tool = toolwire::Tool::new(format!("{service}_{verb}_{thing}"))
                    .title(format!("{verb} {thing} ({service})"))
                    .description(format!("{verb}s a {thing} in {service}. Uses the {service} API; needs a connected account."))
                    .input_schema(json!({
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": format!("The {thing}'s identifier.")},
                            "owner": {"type": "string", "description": format!("Who the {thing} belongs to.")}
                        }
                    }));
                builder = builder.tool(tool, answer);
            }
        }
    }
    let server = builder
        .tool_search(toolwire::ToolSearch::new())
        .build()
        .expect("search server");
    let (session, mut outbound) = connect(&rt, &server);
    let queries: Vec<String> = [
        "archive an invoice in stripe",
        "slack messages export",
        "merge github branch",
        "refund a payment",
    ]
    .iter()
    .enumerate()
    .map(|(id, query)| {
        json!({"jsonrpc": "2.0", "id": id + 10, "method": "tools/call",
                   "params": {"name": "search_tools", "arguments": {"query": query}}})
        .to_string()
    })
    .collect();
    let mut next = 0;
    c.bench_function(
        "tools/call search_tools at 10,000 tools (round trip)",
        |b| {
            b.iter(|| {
                next = (next + 1) % queries.len();
                rt.block_on(async {
                    session.handle_frame(black_box(queries[next].as_bytes()));
                    black_box(outbound.recv().await.unwrap());
                })
            })
        },
    );
    // Shared by the setup (which drains the catalog's change notices) and the measured search.
    let outbound = tokio::sync::Mutex::new(outbound);
    let mut group = c.benchmark_group("tool search");
    group.sample_size(20);
    group.bench_function("search_tools at 10,000 tools, index built first", |b| {
        b.iter_batched(
            || {
                // A change to the catalog: the next search builds the index again.
                server
                    .add_tool(toolwire::Tool::new("changed"), answer)
                    .unwrap();
                server.remove_tool("changed");
                // The list_changed they cause, handled before the measured search.
                rt.block_on(async {
                    let mut outbound = outbound.lock().await;
                    while let Ok(Some(_)) =
                        tokio::time::timeout(std::time::Duration::from_millis(50), outbound.recv())
                            .await
                    {}
                });
            },
            |()| {
                rt.block_on(async {
                    session.handle_frame(black_box(queries[0].as_bytes()));
                    loop {
                        let frame = outbound.lock().await.recv().await.unwrap();
                        if frame.contains("\"result\"") {
                            break black_box(frame);
                        }
                    }
                })
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, dispatch, json_texts, search);
criterion_main!(benches);
