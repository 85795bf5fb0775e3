"""Benchmark anchor: the standalone FastMCP (PyPI `fastmcp`, pinned in bench/setup), on stdio, or
on Streamable HTTP with `--http PORT` (sessions, JSON answers: its fastest stateful mode; its own
uvicorn server, one process).

Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo. Run by
bench/run's session-per-call rounds (the shape of TM Dev Lab's public comparison, where FastMCP
is measured).
"""

from __future__ import annotations

import argparse

import anyio
from fastmcp import FastMCP

server = FastMCP("anchor-fastmcp")


@server.tool
def echo(text: str) -> str:
    """Returns the text it is given."""
    return text


@server.tool
async def sleep(ms: int) -> str:
    """Waits ms milliseconds."""
    await anyio.sleep(ms / 1000)
    return f"slept {ms} ms"


def _extra(q: str, n: int | None = None) -> str:
    return q


for i in range(100):
    server.tool(_extra, name=f"tool_{i:03d}", description=f"Extra tool number {i} (benchmarks tools/list).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run(show_banner=False)
    else:
        server.run(
            "http",
            show_banner=False,
            host="127.0.0.1",
            port=args.http,
            json_response=True,
            stateless_http=False,
            log_level="warning",
            uvicorn_config={"access_log": False},
        )


if __name__ == "__main__":
    main()
