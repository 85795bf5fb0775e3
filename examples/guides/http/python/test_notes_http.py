from typing import Optional

import pytest
from mcp import Client  # the official Python SDK's client, over real HTTP

from notes_http import server


@pytest.mark.asyncio
async def test_a_real_client_over_http() -> None:
    http = await server.serve_http("127.0.0.1", 0)  # port 0: a free one
    try:
        progress = []

        async def on_progress(done: float, total: Optional[float], message: Optional[str]) -> None:
            progress.append(message)

        async with Client(http.url) as client:
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["add_note"]
            result = await client.call_tool("add_note", {"text": "buy milk"}, progress_callback=on_progress)
            assert result.content[0].text == "1 notes"
            assert progress == ["saved"]
    finally:
        http.stop()
        await http.wait()
