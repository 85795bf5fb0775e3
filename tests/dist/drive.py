"""Drives an installed package's ten-line server over stdio with the official MCP Python SDK client.

usage: drive.py COMMAND [ARG...]

The server is the README example of each package: a `forecast(city, days=3)` tool. Checked: the
tool is listed with its schema, a call answers with the forecast, and a call with an invalid
argument is refused with a message naming the argument (the server keeps serving after it).
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client, StdioServerParameters


def fail(message: str) -> None:
    raise SystemExit(f"drive.py: {message}")


def text_of(result: object) -> str:
    return " ".join(getattr(block, "text", "") for block in getattr(result, "content", []))


async def main(command: list[str]) -> None:
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        if "forecast" not in tools:
            fail(f"tools/list has no forecast tool: {sorted(tools)}")
        properties = tools["forecast"].input_schema.get("properties", {})
        if set(properties) != {"city", "days"}:
            fail(f"forecast's input schema lists {sorted(properties)}, not city and days")

        answer = await client.call_tool("forecast", {"city": "Oslo", "days": 2})
        if answer.is_error:
            fail(f"forecast(Oslo, 2) failed: {text_of(answer)}")
        forecast = answer.structured_content or json.loads(text_of(answer))
        if forecast.get("city") != "Oslo" or len(forecast.get("celsius", [])) != 2:
            fail(f"forecast(Oslo, 2) answered {forecast}")

        refused = await client.call_tool("forecast", {"city": "Oslo", "days": "many"})
        if not refused.is_error or "days" not in text_of(refused):
            fail(f"forecast(days='many') was not refused with a message naming days: {refused}")

        again = await client.call_tool("forecast", {"city": "Bergen"})
        forecast = again.structured_content or json.loads(text_of(again))
        if again.is_error or len(forecast.get("celsius", [])) != 3:
            fail(f"forecast(Bergen) after the refusal answered {again}")
        print(f"drive.py: {' '.join(command)}: listed, called, refused an invalid argument, served on")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    anyio.run(main, sys.argv[1:])
