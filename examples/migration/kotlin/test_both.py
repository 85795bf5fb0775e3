"""The official Kotlin SDK's server (SdkServer.kt) and its toolwire port (ToolwireServer.kt), each
started over stdio and driven by the official Python SDK's client, answer alike; where they
differ, the assertion says how and the comment why.

Build both first (`mvn -q package` in this folder), then `pytest` with `mcp` installed."""

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

HERE = Path(__file__).parent
CLASSPATH = f"{HERE / 'target' / 'migration-kotlin-0.1.0.jar'}:{HERE / 'target' / 'lib' / '*'}"
# The JVM's own warnings to stderr (stdout is the protocol's); the SDK's logging libraries quiet.
JVM = ["-Xlog:disable", "-Xlog:all=warning:stderr"]
JVM += ["-Dkotlin-logging.logStartupMessage=false", "-Dslf4j.internal.verbosity=ERROR"]


def server(main_class: str) -> StdioServerParameters:
    return StdioServerParameters(command="java", args=[*JVM, "-cp", CLASSPATH, main_class])


async def answers(main_class: str, mode: str = "legacy") -> dict[str, Any]:
    async with Client(server(main_class), mode=mode) as client:
        return {
            "version": client.protocol_version,
            "tools": [tool.model_dump(exclude_none=True, by_alias=True) for tool in (await client.list_tools()).tools],
            "oslo": await client.call_tool("forecast", {"city": "Oslo", "days": 2}),
            "nine_days": await client.call_tool("forecast", {"city": "Oslo", "days": 9}),
        }


@pytest.mark.asyncio
async def test_both_servers_answer_alike_in_2025_11_25() -> None:
    sdk, ours = await answers("SdkServerKt"), await answers("ToolwireServerKt")
    assert sdk["version"] == ours["version"] == "2025-11-25"

    # The same tool and arguments. toolwire derives the input schema from ForecastArgs and closes
    # it (the arguments are decoded strictly), and derives an output schema from Forecast.
    [sdk_tool], [our_tool] = sdk["tools"], ours["tools"]
    assert our_tool["inputSchema"] == {**sdk_tool["inputSchema"], "additionalProperties": False}
    assert "outputSchema" not in sdk_tool
    assert our_tool["outputSchema"]["properties"]["temperatures"] == {"type": "array", "items": {"type": "number"}}
    assert (our_tool["name"], our_tool["description"]) == (sdk_tool["name"], sdk_tool["description"])

    # The same answer to a valid call: the forecast as structured content and as its JSON text.
    for answer in (sdk["oslo"], ours["oslo"]):
        assert answer.structured_content == {"city": "Oslo", "temperatures": [20.0, 21.0]}
        assert json.loads(answer.content[0].text) == answer.structured_content
        assert not answer.is_error

    # 9 days, past the schema's maximum of 7: the SDK lists the limit but checks nothing, so its
    # handler runs; toolwire checks the arguments first and answers an isError result naming them.
    assert len(sdk["nine_days"].structured_content["temperatures"]) == 9
    assert ours["nine_days"].is_error
    assert "/days: 9 is greater than the maximum of 7" in ours["nine_days"].content[0].text


@pytest.mark.asyncio
async def test_only_toolwire_serves_2026_07_28() -> None:
    # The SDK (0.16.0) answers the 2026-07-28 client the 2025 way, which the client refuses; the
    # toolwire port serves both eras with no change.
    ours = await answers("ToolwireServerKt", mode="2026-07-28")
    assert ours["version"] == "2026-07-28"
    assert ours["oslo"].structured_content == {"city": "Oslo", "temperatures": [20.0, 21.0]}
    with pytest.raises(Exception):  # noqa: B017, PT011 (the client's validation error, in task groups)
        await answers("SdkServerKt", mode="2026-07-28")
