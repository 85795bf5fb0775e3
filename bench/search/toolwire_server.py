"""toolwire (Python) serving `catalog.py`'s N tools over stdio with its tool search on.
Usage: toolwire_server.py N"""

from __future__ import annotations

import sys
from typing import Any

from catalog import catalog
from toolwire import Server


def main() -> None:
    server = Server("search-bench")

    def answer(**arguments: Any) -> str:
        return "done"

    for tool in catalog(int(sys.argv[1])):
        server.add_tool(
            answer,
            name=tool["name"],
            title=tool["title"],
            description=tool["description"],
            input_schema=tool["inputSchema"],
        )
    server.tool_search(max_results=5)
    server.run()


if __name__ == "__main__":
    main()
