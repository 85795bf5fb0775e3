"""FastMCP serving `catalog.py`'s N tools over stdio with its BM25SearchTransform.
Usage: fastmcp_server.py N (under .cache/fastmcp-py)"""

from __future__ import annotations

import sys
from typing import Any

from catalog import catalog
from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool, ToolResult


class Answer(Tool):
    """A tool with the catalog's schema whose calls answer "done"."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content="done")


def main() -> None:
    mcp = FastMCP("search-bench")
    for tool in catalog(int(sys.argv[1])):
        mcp.add_tool(
            Answer(
                name=tool["name"],
                title=tool["title"],
                description=tool["description"],
                parameters=tool["inputSchema"],
            )
        )
    mcp.add_transform(BM25SearchTransform(max_results=5))
    mcp.run(show_banner=False)


if __name__ == "__main__":
    main()
