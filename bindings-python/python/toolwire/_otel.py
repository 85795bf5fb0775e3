"""OpenTelemetry in Python handlers: when `opentelemetry-api` is installed and a tracer provider
is set (`trace.set_tracer_provider(...)`, or `opentelemetry-instrument`), each tool call runs in
a span that continues the caller's trace (the request's `traceparent`/`tracestate`, from its
`_meta` or the HTTP headers), so the spans a handler opens are children of it. Without either,
nothing is done (one check per call)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Optional

try:
    from opentelemetry import propagate, trace
except ImportError:  # optional: the API is not a dependency
    propagate = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]


def tool_span(tool: str, native_ctx: Any) -> Optional[AbstractContextManager[Any]]:
    """A span to run the call of `tool` in, or None when no tracer provider is set."""
    if trace is None or isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    carrier = {key: value for key, value in native_ctx.trace_context.items() if value}
    parent = propagate.extract(carrier) if carrier else None
    return trace.get_tracer("toolwire").start_as_current_span(
        f"tools/call {tool}",
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes={"rpc.system": "jsonrpc", "rpc.method": "tools/call", "mcp.tool.name": tool},
    )
