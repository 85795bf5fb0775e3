"""Benchmark anchor: the official Python SDK's MCPServer (PyPI `mcp`), on stdio, or on
Streamable HTTP with `--http PORT` (sessions, JSON answers: its fastest stateful mode; uvicorn).

Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer

# Warnings only: at info it logs a line per HTTP session, as toolwire's demos do not.
server = MCPServer("anchor-python", log_level="WARNING")


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
    import sys

    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        anyio.run(lambda: server.run_streamable_http_async(port=port, json_response=True))
    else:
        server.run()
