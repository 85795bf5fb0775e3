"""Drives an MCP server over stdio with the official MCP Python SDK's client:
`python client.py COMMAND [ARG ...]`, e.g. `python client.py python hello.py`."""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(command: str, args: list[str]) -> None:
    async with stdio_client(StdioServerParameters(command=command, args=args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            print("tools:", [tool.name for tool in tools.tools])
            result = await session.call_tool("greet", {"name": "Ada"})
            print("greet:", result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
