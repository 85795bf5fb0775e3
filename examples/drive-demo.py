"""Drives a toolwire demo server with the official MCP Python SDK client and shows each exchange:
`drive-demo.py COMMAND [ARG ...]` spawns the server (examples/drive-demo says which)."""

from __future__ import annotations

import asyncio
import json
import sys

import anyio
from mcp import Client, StdioServerParameters


def show(label: str, value: object) -> None:
    print(f"\n== {label}")
    print(json.dumps(value, indent=2, ensure_ascii=False) if not isinstance(value, str) else value)


async def main(command: str, args: list[str]) -> None:
    server = StdioServerParameters(command=command, args=args)
    async with Client(server) as client:
        info = client.server_info
        show("connected", f"{info.name} {info.version}, protocol {client.protocol_version}")
        tools = (await client.list_tools()).tools
        show("tools/list", [{"name": t.name, "description": t.description} for t in tools])

        echo = await client.call_tool("echo", {"text": "hello from the Python SDK"})
        show("echo", echo.content[0].text)
        add = await client.call_tool("add", {"a": 2, "b": 40})
        show("add", {"structuredContent": add.structured_content, "text": add.content[0].text})

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            print(f"   progress {progress:g}/{total:g}")

        show("sleep 350 ms with progress", "")
        slept = await client.call_tool("sleep", {"ms": 350}, progress_callback=on_progress)
        print(f"   result: {slept.content[0].text}")

        with anyio.move_on_after(0.25) as scope:
            await client.call_tool("sleep", {"ms": 30000})
        show("sleep 30 s, cancelled after 250 ms", "cancelled" if scope.cancelled_caught else "finished?!")

        fail = await client.call_tool("fail", {"message": "this tool fails on purpose"})
        show("fail", {"isError": fail.is_error, "text": fail.content[0].text})
        bad = await client.call_tool("add", {"a": "two", "b": 40})
        show("add with a bad argument", {"isError": bad.is_error, "text": bad.content[0].text})


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: drive-demo.py COMMAND [ARG ...] (examples/drive-demo LANG runs it)")
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
