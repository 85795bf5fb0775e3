"""The memory of a registered catalog: `catalog.py`'s N tools registered in one Python process
(`toolwire.Server`, metrics on), VmRSS before and after, with their own (distinct) input
schemas or all with one shared schema. Run with a Python that imports toolwire:

    .cache/interop-py/bin/python bench/search/registered_memory.py [N]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog import catalog  # noqa: E402
from toolwire import Server  # noqa: E402

SHARED = {"type": "object", "properties": {"id": {"type": "string"}}}


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def registered(count: int, distinct: bool) -> float:
    """MiB the process grew by registering `count` tools."""
    before = resident_mib()
    server = Server("registered-memory")

    def answer(**arguments: Any) -> str:
        return "done"

    for tool in catalog(count):
        server.add_tool(
            answer,
            name=tool["name"],
            title=tool["title"],
            description=tool["description"],
            input_schema=tool["inputSchema"] if distinct else SHARED,
        )
    grown = resident_mib() - before
    del server
    return grown


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    if len(sys.argv) > 2:
        print(f"{registered(count, sys.argv[2] == 'distinct'):.1f}")
        return
    # Each in a process of its own: a second run in one process would reuse the first's heap.
    for mode, what in [("distinct", "distinct schemas"), ("shared", "one shared schema")]:
        grown = subprocess.run(
            [sys.executable, __file__, str(count), mode], check=True, capture_output=True, text=True
        ).stdout.strip()
        print(f"{count} tools, {what}: +{grown} MiB")


if __name__ == "__main__":
    main()
