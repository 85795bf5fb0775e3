"""The official MCP Python SDK client (PyPI `mcp` 2.3) in its 2026-07-28 mode against a toolwire
conformance server (`examples/run-demo LANG --conformance`), over stdio and Streamable HTTP: the
client probes `server/discover`, answers an elicitation through MRTR rounds (the tool asking both
ways: returning InputRequired, and `ctx.elicit` replayed), hears a list change on a
`subscriptions/listen` stream, gets logs only at the level it asked for, and is refused (-32021)
what needs a capability it did not declare; it declares no tasks extension, so a task-capable tool
answers in its request. The demo's own calls, progress and cancellation in
this mode are covered by test_python_sdk_client.py and test_python_sdk_http.py (`mode="auto"`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult
from test_python_sdk_http import ROOT, RUN_DEMO, start

LANG = os.environ.get("TOOLWIRE_DEMO_LANG", "rust")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    servers = start("--conformance")
    try:
        yield next(servers).url
    finally:
        servers.close()


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> Any:
    if request.param == "http":
        return request.getfixturevalue("http_url")
    return StdioServerParameters(
        command="bash", args=["-c", f'exec "{RUN_DEMO}" {LANG} --conformance 2>/dev/null'], cwd=str(ROOT)
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def answer_name(context: Any, params: Any) -> ElicitResult:
    fields = params.requested_schema.get("properties", {})
    if "name" in fields:
        return ElicitResult(action="accept", content={"name": "Ann"})
    return ElicitResult(action="accept", content={"confirmed": True})


def test_discover_then_mrtr_elicitation(server: Any) -> None:
    async def go() -> None:
        async with Client(server, elicitation_callback=answer_name) as client:
            assert client.protocol_version == "2026-07-28"
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "test_input_required_result_elicitation" in tools
            # The tool returns InputRequired; the client answers and calls again.
            result = await client.call_tool("test_input_required_result_elicitation", {})
            assert result.content[0].text == "Hello, Ann!"
            # The tool awaits ctx.elicit: replayed, and this time it has its answer.
            result = await client.call_tool("test_streaming_elicitation", {})
            assert result.content[0].text == "confirmation: accept"

            # Three rounds, the state sealed in between.
            async def two_steps(context: Any, params: Any) -> ElicitResult:
                field = next(iter(params.requested_schema["properties"]))
                return ElicitResult(action="accept", content={field: "Bo" if field == "name" else "green"})

        async with Client(server, elicitation_callback=two_steps) as client:
            result = await client.call_tool("test_input_required_result_multi_round", {})
            assert result.content[0].text == "Bo likes green."

    run(go())


def test_listen_hears_a_list_change(server: Any) -> None:
    async def go() -> None:
        async with Client(server) as client:
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed
                await client.call_tool("test_trigger_tool_change", {})
                with anyio.fail_after(10):
                    event = await subscription.__anext__()
                assert isinstance(event, ToolsListChanged)

    run(go())


def test_logs_only_at_the_level_asked_and_capabilities_per_request(server: Any) -> None:
    async def go() -> None:
        levels: list[str] = []

        async def on_log(params: Any) -> None:
            levels.append(params.level)

        async with Client(server, logging_callback=on_log, log_level="info") as client:
            result = await client.call_tool("test_logging_tool", {})
            assert result.content[0].text == "Logging tool executed"
        assert levels == ["info", "warning"], levels
        async with Client(server) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("test_missing_capability", {})
            assert refused.value.code == -32021

    run(go())


def test_a_task_capable_tool_answers_a_client_without_the_tasks_extension(server: Any) -> None:
    """The SDK declares no tasks extension: a tool that may run as a task answers in its
    request, however long it takes, and one that runs only as a task is refused (-32021)."""

    async def go() -> None:
        async with Client(server, elicitation_callback=answer_name) as client:
            result = await client.call_tool("slow_compute", {"seconds": 1, "label": "sdk"})
            assert result.content[0].text == 'Computation "sdk" completed after 1s', result
            result = await client.call_tool("confirm_delete", {"filename": "a.txt"})
            assert result.content[0].text == "Kept a.txt", result
            with pytest.raises(MCPError) as refused:
                await client.call_tool("failing_job", {})
            assert refused.value.code == -32021

    run(go())
