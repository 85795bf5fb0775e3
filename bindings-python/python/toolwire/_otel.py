"""OpenTelemetry in Python handlers: when `opentelemetry-api` is installed and a tracer provider
is set (`trace.set_tracer_provider(...)`, or `opentelemetry-instrument`), each tool call runs in
a span that continues the caller's trace (the request's `traceparent`/`tracestate`, from its
`_meta` or the HTTP headers), so the spans a handler opens are children of it. Without either,
nothing is done (one check per call)."""

from __future__ import annotations

import logging
import os
import sys
from contextlib import AbstractContextManager
from typing import Any, Optional

# Not imported here: importing `opentelemetry.propagate` costs tens of milliseconds of a
# server's start, and a tracer provider can only have been set by code that imported
# `opentelemetry.trace` already, or named in OTEL_PYTHON_TRACER_PROVIDER (which
# `get_tracer_provider()` loads). Found in `sys.modules` per call, then.
_propagate: Any = None
# Read once: a per-call lookup in `os.environ` would cost every call of every server.
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
# Tracing must never fail a call: a broken setup (say OTEL_PROPAGATORS naming a propagator that
# is not installed) is logged once and calls run without spans.
_broken = False


def tool_span(tool: str, native_ctx: Any) -> Optional[AbstractContextManager[Any]]:
    """A span to run the call of `tool` in, or None when no tracer provider is set."""
    global _propagate, _broken
    if _broken:
        return None
    trace = sys.modules.get("opentelemetry.trace")
    try:
        if trace is None:
            if not _PROVIDER_FROM_ENV:
                return None
            from opentelemetry import trace
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
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
    except Exception:
        _broken = True
        logging.getLogger("toolwire").exception("OpenTelemetry is set up wrong; tool calls run without spans")
        return None
