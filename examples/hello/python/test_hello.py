import pytest
from toolwire.testing import connect

from hello import server


@pytest.mark.asyncio
async def test_greet() -> None:
    async with connect(server) as client:
        result = await client.call_tool("greet", {"name": "Ada"})
        assert result["content"][0]["text"] == "Hello, Ada!"
