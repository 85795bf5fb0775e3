"""`server.metrics()` and `server.metrics_text()`: calls counted by tool and method with how
they ended, in both eras; the Prometheus text read back by the official Prometheus parser;
`serve_http(metrics_path=...)` serving it to a scraper; nothing counted with `metrics=False`."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families
from toolwire import Server
from toolwire.testing import McpError, connect


def make_server(**options: object) -> Server:
    server = Server("metered", **options)  # type: ignore[arg-type]

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def fail() -> str:
        raise ValueError("broken")

    return server


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_calls_are_counted_by_tool_and_outcome(protocol_version: str) -> None:
    server = make_server()
    async with connect(server, protocol_version=protocol_version) as client:
        assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
        assert (await client.call_tool("echo", {"text": 3}))["isError"] is True
        assert (await client.call_tool("fail", {}))["isError"] is True
        with pytest.raises(McpError) as unknown:
            await client.call_tool("nope", {})
        assert unknown.value.code == -32602

        metrics = server.metrics()
        assert metrics["enabled"] is True
        assert metrics["tools"]["echo"]["outcomes"] == {"result": 1, "tool_error": 1}
        assert metrics["tools"]["fail"]["outcomes"] == {"tool_error": 1}
        assert "nope" not in metrics["tools"]
        calls = metrics["methods"]["tools/call"]
        assert calls["calls"] == 4
        assert calls["outcomes"]["invalid_params"] == 1
        assert calls["inFlight"] == 0
        assert calls["latency"]["count"] == 4
        assert calls["latency"]["buckets"][-1] == {"le": 10.0, "count": 4}
        # A session is live in the legacy era only; the 2026-07-28 era has none.
        assert metrics["sessions"] == (1 if protocol_version == "2025-11-25" else 0)

    parsed = samples(server.metrics_text())
    assert parsed[("toolwire_tool_calls_total", (("outcome", "result"), ("tool", "echo")))] == 1
    assert parsed[("toolwire_tool_calls_total", (("outcome", "tool_error"), ("tool", "fail")))] == 1
    assert parsed[("toolwire_tool_call_duration_seconds_count", (("tool", "echo"),))] == 2
    assert parsed[("toolwire_tool_call_duration_seconds_bucket", (("le", "+Inf"), ("tool", "echo")))] == 2
    assert parsed[("toolwire_requests_total", (("method", "tools/call"), ("outcome", "invalid_params")))] == 1
    assert parsed[("toolwire_refused_total", (("limit", "calls"),))] == 0


async def test_serve_http_serves_the_metrics_to_a_scraper() -> None:
    server = make_server()
    http = await server.serve_http(port=0, metrics_path="/metrics")
    try:
        # The official Python SDK's client, over HTTP.
        async with Client(http.url, mode="legacy") as client:
            await client.call_tool("echo", {"text": "over http"})
            metrics_url = http.url.removesuffix("/mcp") + "/metrics"

            def scrape() -> tuple[str, str]:
                with urllib.request.urlopen(metrics_url, timeout=10) as reply:
                    return reply.headers["content-type"], reply.read().decode()

            content_type, text = await asyncio.to_thread(scrape)
            assert content_type == "text/plain; version=0.0.4; charset=utf-8"
            parsed = samples(text)
            assert parsed[("toolwire_tool_calls_total", (("outcome", "result"), ("tool", "echo")))] == 1
            assert parsed[("toolwire_sessions", ())] == 1
    finally:
        http.stop()
        await http.wait()


async def test_metrics_can_be_turned_off() -> None:
    server = make_server(metrics=False)
    async with connect(server) as client:
        await client.call_tool("echo", {"text": "hi"})
    metrics = server.metrics()
    assert metrics["enabled"] is False
    assert metrics["tools"] == {} and metrics["methods"] == {}
    assert "toolwire_tool_calls_total{" not in server.metrics_text()
