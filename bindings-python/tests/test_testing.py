"""toolwire.testing: the in-memory test client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from toolwire import Context, Server, ToolError
from toolwire.testing import McpError, connect


def weather_server() -> Server:
    server = Server("weather", "1.0")

    @server.tool()
    async def forecast(ctx: Context, city: str, days: int = 3) -> dict:
        """Forecast for a city."""
        if days > 7:
            raise ToolError("at most 7 days")
        for day in range(days):
            await ctx.progress(day + 1, days, f"day {day + 1}")
        return {"city": city, "celsius": [20.0 + day for day in range(days)]}

    @server.tool()
    async def confirm_delete(ctx: Context, filename: str) -> str:
        answer = await ctx.elicit(
            {
                "mode": "form",
                "message": f"Delete {filename}?",
                "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
            }
        )
        confirmed = answer.get("action") == "accept" and answer.get("content", {}).get("confirm")
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @server.tool()
    async def first_root(ctx: Context) -> str:
        roots = await ctx.list_roots()
        return roots[0]["uri"] if roots else "none"

    @server.resource("memo://readme", name="readme", mime_type="text/plain")
    def readme() -> str:
        return "read me"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.completion(prompt="greet")
    def names(argument: str, value: str, context: Any) -> list[str]:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]

    return server


@pytest.mark.asyncio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_tools_resources_prompts_and_completion(version: str) -> None:
    async with connect(weather_server(), protocol_version=version) as client:
        assert client.server["name"] == "weather"
        names = [tool["name"] for tool in await client.list_tools()]
        assert names == ["confirm_delete", "first_root", "forecast"]
        seen: list[tuple[Any, Any, Any]] = []
        result = await client.call_tool(
            "forecast", {"city": "Oslo", "days": 2}, progress_callback=lambda p, t, m: seen.append((p, t, m))
        )
        assert result["structuredContent"] == {"city": "Oslo", "celsius": [20.0, 21.0]}
        assert seen == [(1, 2, "day 1"), (2, 2, "day 2")]
        refused = await client.call_tool("forecast", {"city": "Oslo", "days": 9})
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == "at most 7 days"
        contents = (await client.read_resource("memo://readme"))["contents"]
        assert contents == [{"uri": "memo://readme", "mimeType": "text/plain", "text": "read me"}]
        assert [p["name"] for p in await client.list_prompts()] == ["greet"]
        messages = (await client.get_prompt("greet", {"name": "Ada"}))["messages"]
        assert messages == [{"role": "user", "content": {"type": "text", "text": "Hello Ada"}}]
        completion = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "a")
        assert completion["values"] == ["ada", "alan"]


@pytest.mark.asyncio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_questions_go_to_the_callbacks(version: str) -> None:
    asked: list[dict[str, Any]] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"confirm": True}}

    roots = [{"uri": "file:///work", "name": "work"}]
    async with connect(weather_server(), protocol_version=version, elicitation=elicitation, roots=roots) as client:
        result = await client.call_tool("confirm_delete", {"filename": "a.txt"})
        assert result["content"] == [{"type": "text", "text": "Deleted a.txt"}]
        assert [q["message"] for q in asked] == ["Delete a.txt?"]
        assert (await client.call_tool("first_root"))["content"][0]["text"] == "file:///work"


@pytest.mark.asyncio
async def test_a_question_without_a_callback_is_a_missing_capability() -> None:
    async with connect(weather_server()) as client:
        result = await client.call_tool("confirm_delete", {"filename": "a.txt"})
        assert result["isError"] is True
    async with connect(weather_server(), protocol_version="2026-07-28") as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("confirm_delete", {"filename": "a.txt"})
        assert refused.value.code == -32021


@pytest.mark.asyncio
async def test_errors_are_mcp_errors() -> None:
    async with connect(weather_server()) as client:
        with pytest.raises(McpError) as unknown:
            await client.request("no/such/method")
        assert unknown.value.code == -32601
        with pytest.raises(McpError) as missing:
            await client.read_resource("memo://missing")
        assert missing.value.code == -32002


@pytest.mark.asyncio
async def test_a_failing_callback_is_an_error_the_tool_sees() -> None:
    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no person at the keyboard")

    async with connect(weather_server(), elicitation=elicitation) as client:
        result = await client.call_tool("confirm_delete", {"filename": "a.txt"})
        assert result["isError"] is True
        assert "no person at the keyboard" in result["content"][0]["text"]


@pytest.mark.asyncio
async def test_async_progress_callbacks_are_awaited() -> None:
    seen: list[Any] = []

    async def progress(value: float, total: Any, message: Any) -> None:
        seen.append(value)

    async with connect(weather_server()) as client:
        await client.call_tool("forecast", {"city": "Oslo", "days": 3}, progress_callback=progress)
    assert seen == [1, 2, 3]
