import pytest
from toolwire.testing import McpError, connect

from guarded import audit, server


@pytest.mark.asyncio
async def test_the_rule_the_audit_and_the_metrics() -> None:
    async with connect(server) as client:
        assert (await client.call_tool("ping"))["content"][0]["text"] == "pong"
        with pytest.raises(McpError) as refused:
            await client.call_tool("wipe")  # a test client has no principal
        assert (refused.value.code, refused.value.error["message"]) == (-32001, "Forbidden")

    assert audit == ["tools/call ping: result"]  # the refused call never reached call_next()
    # The engine's own counters: a JSON snapshot, and Prometheus text for a /metrics route.
    metrics = server.metrics()
    assert metrics["methods"]["tools/call"]["outcomes"] == {"result": 1, "refused": 1}
    assert metrics["tools"]["ping"]["outcomes"] == {"result": 1}
    assert 'toolwire_tool_calls_total{tool="ping",outcome="result"} 1' in server.metrics_text()
