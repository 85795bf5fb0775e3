//! A `tracing` span per inbound request: target [`SPAN_TARGET`], named for OpenTelemetry
//! (`tools/call echo`), with the attributes of the OpenTelemetry JSON-RPC and MCP conventions,
//! its outcome recorded when it is answered, and, with the `otel` feature, the caller's W3C
//! trace context (`_meta.traceparent`, or the HTTP `traceparent` header) as its parent.
//!
//! A span no subscriber asked for costs one cached interest check per request.

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

use crate::metrics::AnswerKind;
use crate::wire::{ErrorCode, RequestId};

/// The target of the request spans: enable it (at INFO) to get them, e.g. `mcp=info`.
pub const SPAN_TARGET: &str = "mcp::server";

/// The span of one request (`Span::none()` when no subscriber wants it). A call through the
/// tool search's `call_tool` is named for the tool it calls, as metrics and middleware see it.
pub(crate) fn request_span(
    server: &super::server::ServerInner,
    method: &str,
    params: Option<&Value>,
    id: &RequestId,
) -> Span {
    if !tracing::enabled!(target: SPAN_TARGET, tracing::Level::INFO) {
        return Span::none();
    }
    let name = match method {
        "tools/call" => super::search::called_tool(server, params).map(|(name, _)| name),
        _ => params
            .and_then(|p| p.get("name").or_else(|| p.get("uri")))
            .and_then(Value::as_str),
    };
    let span_name = match name {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    };
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.request",
        otel.name = %span_name,
        otel.kind = "server",
        otel.status_code = Empty,
        rpc.system = "jsonrpc",
        rpc.method = %method,
        rpc.jsonrpc.request_id = %id,
        rpc.jsonrpc.error_code = Empty,
        mcp.method.name = %method,
        mcp.tool.name = Empty,
        mcp.resource.uri = Empty,
        mcp.prompt.name = Empty,
        mcp.outcome = Empty,
    );
    match (method, name) {
        ("tools/call", Some(name)) => {
            span.record("mcp.tool.name", name);
        }
        ("prompts/get", Some(name)) => {
            span.record("mcp.prompt.name", name);
        }
        ("resources/read" | "resources/subscribe" | "resources/unsubscribe", Some(uri)) => {
            span.record("mcp.resource.uri", uri);
        }
        _ => {}
    }
    #[cfg(feature = "otel")]
    if let Some(meta) = params.and_then(|p| p.get("_meta")) {
        crate::telemetry::continue_trace(&span, meta);
    }
    span
}

/// Records how the request ended on its span.
pub(crate) fn record_outcome(span: &Span, ending: AnswerKind, error_code: Option<ErrorCode>) {
    if span.is_disabled() {
        return;
    }
    span.record("mcp.outcome", ending.name());
    if let Some(code) = error_code {
        span.record("rpc.jsonrpc.error_code", code.0);
        span.record("otel.status_code", "ERROR");
    } else if ending == AnswerKind::ToolError {
        span.record("otel.status_code", "ERROR");
    }
}

/// Whether request spans are wanted now (one cached interest check).
pub(crate) fn spans_wanted() -> bool {
    tracing::enabled!(target: SPAN_TARGET, tracing::Level::INFO)
}
