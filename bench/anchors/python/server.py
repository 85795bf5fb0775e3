"""Benchmark anchor: the official Python SDK's MCPServer (PyPI `mcp`), on stdio.

Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("anchor-python")


@server.tool()
def echo(text: str) -> str:
    """Returns the text it is given."""
    return text


@server.tool()
async def sleep(ms: int) -> str:
    """Waits ms milliseconds."""
    await anyio.sleep(ms / 1000)
    return f"slept {ms} ms"


def _extra(q: str, n: int | None = None) -> str:
    return q


for i in range(100):
    server.add_tool(_extra, name=f"tool_{i:03d}", description=f"Extra tool number {i} (benchmarks tools/list).")


if __name__ == "__main__":
    server.run()
