"""`server.tool_search(...)`: a large catalog offered through `search_tools` and `call_tool`;
the search ranks what the client may see, `call_tool` is the named tool's own call (middleware
sees that tool), and every tool stays callable by its name."""

from __future__ import annotations

from typing import Callable

import pytest
from toolwire import CallNext, RegistrationError, Request, Server, ToolError
from toolwire.testing import McpError, connect


# --8<-- [start:server]
def big_server() -> Server:
    server = Server("big")

    @server.tool()
    def help() -> str:
        """What this server can do."""
        return "search for a tool, then call it"

    @server.tool(title="Send an email")
    def send_email(to: str) -> str:
        """Sends a message to one recipient."""
        return f"sent to {to}"

    @server.tool(required_scopes=["hr"])
    def payroll_export() -> str:
        """Exports the payroll as CSV."""
        return "name,salary"

    def reader(n: int) -> Callable[[], str]:
        return lambda: f"metric {n} is 42"

    for n in range(300):
        server.add_tool(reader(n), name=f"metric_{n}", description=f"Reads metric number {n}.")

    # Lists `help`, `search_tools` and `call_tool`; finds any of the others.
    server.tool_search(pinned=["help"], max_results=3)
    return server


# --8<-- [end:server]


def names(tools: list[dict]) -> list[str]:
    return [tool["name"] for tool in tools]


@pytest.mark.asyncio
async def test_the_listing_offers_the_search_which_finds_and_calls() -> None:
    async with connect(big_server()) as client:
        assert names(await client.list_tools()) == ["call_tool", "help", "search_tools"]

        found = await client.call_tool("search_tools", {"query": "email someone"})
        tools = found["structuredContent"]["tools"]
        assert names(tools)[0] == "send_email"
        assert tools[0]["inputSchema"]["required"] == ["to"]

        three = await client.call_tool("search_tools", {"query": "metric"})
        assert len(three["structuredContent"]["tools"]) == 3
        exact = await client.call_tool("search_tools", {"query": "metric_42", "limit": 1})
        assert names(exact["structuredContent"]["tools"]) == ["metric_42"]

        called = await client.call_tool("call_tool", {"name": "send_email", "arguments": {"to": "ada"}})
        assert called["content"][0]["text"] == "sent to ada"
        # Every tool stays callable by its own name.
        direct = await client.call_tool("metric_7")
        assert direct["content"][0]["text"] == "metric 7 is 42"

        # A search the schema refuses is an isError result; an unknown tool, the usual error.
        bad = await client.call_tool("search_tools", {"query": "x", "limit": 9})
        assert bad["isError"] is True
        with pytest.raises(McpError, match="Unknown tool"):
            await client.call_tool("call_tool", {"name": "no_such"})


@pytest.mark.asyncio
async def test_a_client_finds_only_what_it_may_see() -> None:
    async with connect(big_server()) as client:
        found = await client.call_tool("search_tools", {"query": "payroll"})
        assert found["structuredContent"]["tools"] == []
        with pytest.raises(McpError, match="Unknown tool: payroll_export"):
            await client.call_tool("call_tool", {"name": "payroll_export"})


@pytest.mark.asyncio
async def test_middleware_sees_the_tool_call_tool_calls() -> None:
    server = big_server()

    @server.middleware
    async def no_emails(request: Request, call_next: CallNext) -> None:
        if request.name == "send_email":
            raise ToolError("email is off today")
        await call_next()

    async with connect(server) as client:
        refused = await client.call_tool("call_tool", {"name": "send_email", "arguments": {"to": "ada"}})
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == "email is off today"


@pytest.mark.asyncio
async def test_the_search_can_be_turned_off_and_bad_settings_are_refused() -> None:
    server = big_server()
    with pytest.raises(RegistrationError, match="max_results"):
        server.tool_search(max_results=0)
    with pytest.raises(RegistrationError, match="two names"):
        server.tool_search(search_tool_name="find", call_tool_name="find")
    with pytest.raises(TypeError, match="pinned"):
        server.tool_search(pinned="help")
    with pytest.raises(TypeError, match="max_results"):
        server.tool_search(max_results="5")  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="search_tools"):
        server.add_tool(lambda: "mine", name="search_tools")

    server.tool_search(enabled=False)
    async with connect(server) as client:
        # Every tool but payroll_export, which this client may not see.
        assert len(await client.list_tools()) == 302
        server.add_tool(lambda: "mine", name="call_tool")
    with pytest.raises(RegistrationError, match="call_tool"):
        server.tool_search()
    server.tool_search(call_tool_name="invoke")
