//! Traces (the `otel` feature): each request is a span continuing its caller's W3C trace (from
//! `_meta` in both eras, or the HTTP `traceparent` header), named and attributed as the
//! OpenTelemetry conventions say, with its outcome; a handler's own spans are its children.
#![cfg(feature = "otel")]

mod common;

use common::Client;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolwire::transport::http::{HttpOptions, ResponseMode};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};
use tracing_subscriber::layer::SubscriberExt;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER: &str = "00f067aa0ba902b7";

fn traceparent() -> String {
    format!("00-{TRACE}-{CALLER}-01")
}

fn server() -> Server {
    Server::builder("traced", "1")
        .tool(Tool::new("echo"), |_ctx: Context, args: Value| async move {
            // A span of the handler's own: a child of the request's.
            let _work = tracing::info_span!("lookup").entered();
            Ok::<_, ToolError>(ToolOutput::text(
                args["text"].as_str().unwrap_or("").to_owned(),
            ))
        })
        .tool(
            Tool::new("context"),
            |ctx: Context, _args: Value| async move {
                Ok::<_, ToolError>(ToolOutput::text(
                    ctx.trace_context().traceparent.unwrap_or_default(),
                ))
            },
        )
        .tool_search(toolwire::ToolSearch::new().pinned(["echo", "context"]))
        .build()
        .unwrap()
}

/// Spans go to memory for the test; the guard keeps them flowing on this thread.
fn collect() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(toolwire::telemetry::layer(&provider));
    let guard = tracing::subscriber::set_default(subscriber);
    (exporter, provider, guard)
}

fn finished(exporter: &InMemorySpanExporter, provider: &SdkTracerProvider) -> Vec<SpanData> {
    provider.force_flush().expect("flush");
    exporter.get_finished_spans().expect("spans")
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no span {name:?} in {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

#[tokio::test]
async fn a_legacy_call_continues_the_trace_its_meta_names() {
    let (exporter, provider, _guard) = collect();
    let server = server();
    let mut client = Client::initialized(&server).await;
    let answer = client
        .request(
            json!(1),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"},
            "_meta": {"traceparent": traceparent(), "tracestate": "vendor=1"}}),
        )
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
    let unknown = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "nope", "_meta": {"traceparent": traceparent()}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    let context = client
        .request(
            json!(3),
            "tools/call",
            json!({"name": "context", "_meta": {"traceparent": traceparent()}}),
        )
        .await;
    assert_eq!(
        context["result"]["content"][0]["text"],
        traceparent(),
        "the handler reads it too"
    );
    // Through the tool search's call_tool: named for the tool it calls.
    let through = client
        .request(
            json!(4),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "echo", "arguments": {"text": "via"}}}),
        )
        .await;
    assert_eq!(through["result"]["content"][0]["text"], "via");
    client.finish().await;

    let spans = finished(&exporter, &provider);
    let call = named(&spans, "tools/call echo");
    assert_eq!(
        call.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(call.parent_span_id, SpanId::from_hex(CALLER).unwrap());
    assert!(call.parent_span_is_remote);
    assert_eq!(call.span_kind, opentelemetry::trace::SpanKind::Server);
    assert_eq!(attribute(call, "rpc.method").as_deref(), Some("tools/call"));
    assert_eq!(attribute(call, "rpc.system").as_deref(), Some("jsonrpc"));
    assert_eq!(attribute(call, "mcp.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(call, "mcp.outcome").as_deref(), Some("result"));
    assert_eq!(
        attribute(call, "rpc.jsonrpc.request_id").as_deref(),
        Some("1")
    );
    let lookup = named(&spans, "lookup");
    assert_eq!(
        lookup.parent_span_id,
        call.span_context.span_id(),
        "the handler's span is the request's child"
    );
    assert_eq!(lookup.span_context.trace_id(), call.span_context.trace_id());

    let echoes = spans.iter().filter(|s| s.name == "tools/call echo").count();
    assert_eq!(echoes, 2, "the call through call_tool is a call of echo");

    let failed = named(&spans, "tools/call nope");
    assert_eq!(
        attribute(failed, "mcp.outcome").as_deref(),
        Some("invalid_params")
    );
    assert_eq!(
        attribute(failed, "rpc.jsonrpc.error_code").as_deref(),
        Some("-32602")
    );
    assert!(
        matches!(failed.status, opentelemetry::trace::Status::Error { .. }),
        "{:?}",
        failed.status
    );
    // No traceparent: a trace of its own (the handshake).
    let initialize = named(&spans, "initialize");
    assert_ne!(
        initialize.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(initialize.parent_span_id, SpanId::INVALID);
}

#[tokio::test]
async fn a_modern_request_and_an_http_header_carry_the_trace_too() {
    let (exporter, provider, _guard) = collect();
    let server = server();
    let mut modern = Client::new(&server);
    let answer = modern
        .request(
            json!(1),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "now"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "traceparent": traceparent()}}),
        )
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "now");

    // Over HTTP, the header: a stateless JSON exchange, written by hand.
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.response_mode = ResponseMode::Json;
    let http = server.serve_http("127.0.0.1:0", options).await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "context", "arguments": {}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n\
         traceparent: {tp}\r\nconnection: close\r\ncontent-length: {len}\r\n\r\n{body}",
        addr = http.local_addr(),
        tp = traceparent().replace(CALLER, "b7ad6b7169203331"),
        len = body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(http.local_addr())
        .await
        .unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    socket.read_to_string(&mut reply).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.contains("b7ad6b7169203331"),
        "the handler sees the header's context: {reply}"
    );
    http.shutdown().await;

    let spans = finished(&exporter, &provider);
    let calls: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name.starts_with("tools/call"))
        .collect();
    let modern_call = calls
        .iter()
        .find(|s| s.name == "tools/call echo")
        .expect("the modern call");
    assert_eq!(
        modern_call.parent_span_id,
        SpanId::from_hex(CALLER).unwrap()
    );
    let http_call = calls
        .iter()
        .find(|s| s.name == "tools/call context")
        .expect("the HTTP call");
    assert_eq!(
        http_call.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(
        http_call.parent_span_id,
        SpanId::from_hex("b7ad6b7169203331").unwrap()
    );
}
