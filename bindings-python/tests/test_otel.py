"""Traces: with `opentelemetry-api` and a tracer provider set, each tool call runs in a span that
continues the caller's trace (`_meta.traceparent` in both eras, or the HTTP `traceparent`
header), and the spans the handler opens are its children."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolwire import Server, _otel
from toolwire.testing import connect

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{CALLER}-01"

EXPORTER = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
# Process-wide, as an application sets it; the other tests' calls make spans too, harmlessly.
trace.set_tracer_provider(_provider)


def traced_server() -> Server:
    server = Server("traced")
    tracer = trace.get_tracer("weather")

    @server.tool()
    async def forecast(city: str) -> str:
        with tracer.start_as_current_span("lookup"):
            await asyncio.sleep(0)
        return f"sun in {city}"

    @server.tool()
    def blocking(city: str) -> str:
        with tracer.start_as_current_span("blocking lookup"):
            return f"rain in {city}"

    return server


def spans_named(name: str) -> list:
    return [span for span in EXPORTER.get_finished_spans() if span.name == name]


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_a_call_continues_the_callers_trace(protocol_version: str) -> None:
    EXPORTER.clear()
    server = traced_server()
    async with connect(server, protocol_version=protocol_version) as client:
        for tool in ("forecast", "blocking"):
            reply = await client.request(
                "tools/call",
                {"name": tool, "arguments": {"city": "Oslo"}, "_meta": {"traceparent": TRACEPARENT}},
            )
            assert reply["content"][0]["text"].endswith("in Oslo")
    for call, inner in (("tools/call forecast", "lookup"), ("tools/call blocking", "blocking lookup")):
        (server_span,) = spans_named(call)
        assert format(server_span.context.trace_id, "032x") == TRACE
        assert format(server_span.parent.span_id, "016x") == CALLER
        assert server_span.parent.is_remote
        assert server_span.kind == trace.SpanKind.SERVER
        assert server_span.attributes["mcp.tool.name"] == call.split()[1]
        (child,) = spans_named(inner)
        assert child.parent.span_id == server_span.context.span_id, "the handler's span is the call's child"


async def test_the_http_traceparent_header_is_the_parent_too() -> None:
    EXPORTER.clear()
    server = traced_server()
    http = await server.serve_http(port=0, stateless=True, json_response=True)
    try:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "forecast", "arguments": {"city": "Rome"}},
            }
        ).encode()
        request = urllib.request.Request(
            http.url,
            data=body,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
                "traceparent": TRACEPARENT,
            },
        )

        def post() -> dict:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return json.loads(reply.read())

        answer = await asyncio.to_thread(post)
        assert answer["result"]["content"][0]["text"] == "sun in Rome"
    finally:
        http.stop()
        await http.wait()
    (server_span,) = spans_named("tools/call forecast")
    assert format(server_span.context.trace_id, "032x") == TRACE
    assert format(server_span.parent.span_id, "016x") == CALLER


async def test_without_a_traceparent_the_call_starts_a_trace() -> None:
    EXPORTER.clear()
    async with connect(traced_server()) as client:
        await client.call_tool("forecast", {"city": "Lima"})
    (server_span,) = spans_named("tools/call forecast")
    assert server_span.parent is None


def test_importing_toolwire_does_not_import_opentelemetry() -> None:
    # Its import is tens of milliseconds of every server's start; a provider set later is
    # still found, since setting one imports `opentelemetry.trace` (the tests above).
    code = "import sys, toolwire; print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


async def test_a_broken_tracing_setup_is_logged_once_and_fails_no_call(monkeypatch, caplog) -> None:
    # As when OTEL_PROPAGATORS names a propagator that is not installed: the propagator fails.
    class BrokenPropagator:
        def extract(self, carrier: dict) -> None:
            raise ValueError("no such propagator")

    monkeypatch.setattr(_otel, "_propagate", BrokenPropagator())
    monkeypatch.setattr(_otel, "_broken", False)
    EXPORTER.clear()
    async with connect(traced_server()) as client:
        for tool in ("forecast", "blocking", "forecast"):
            reply = await client.request(
                "tools/call",
                {"name": tool, "arguments": {"city": "Oslo"}, "_meta": {"traceparent": TRACEPARENT}},
            )
            assert reply["content"][0]["text"].endswith("in Oslo")
    assert not spans_named("tools/call forecast")
    assert [r.message for r in caplog.records].count("OpenTelemetry is set up wrong; tool calls run without spans") == 1
