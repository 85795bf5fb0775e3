"""OpenTelemetry in Python handlers: when `opentelemetry-api` is installed and a tracer provider
is set (`trace.set_tracer_provider(...)`, or `opentelemetry-instrument`), each tool call runs in
a span that continues the caller's trace (the request's `traceparent`/`tracestate`, from its
`_meta` or the HTTP headers), so the spans a handler opens are children of it. Without either,
nothing is done (one check per call)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any, Optional

# Not imported here: importing `opentelemetry.propagate` costs tens of milliseconds of a
# server's start, and a tracer provider can only have been set by code that imported
# `opentelemetry.trace` already. Found in `sys.modules` per call, then.
_propagate: Any = None


def tool_span(tool: str, native_ctx: Any) -> Optional[AbstractContextManager[Any]]:
    """A span to run the call of `tool` in, or None when no tracer provider is set."""
    global _propagate
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    if _propagate is None:
        from opentelemetry import propagate

        _propagate = propagate
    carrier = {key: value for key, value in native_ctx.trace_context.items() if value}
    parent = _propagate.extract(carrier) if carrier else None
    return trace.get_tracer("toolwire").start_as_current_span(
        f"tools/call {tool}",
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes={"rpc.system": "jsonrpc", "rpc.method": "tools/call", "mcp.tool.name": tool},
    )
