"""A toolwire server of plain functions only, for bench/cold-start: the Python demo's `echo`,
`add` and `fail` and its 100 extra tools, without its `async def sleep`. With no `async def`
tool and no lifespan, `Server.run()` serves stdio without an asyncio loop and asyncio is never
imported, which the demo (and any server with an `async def` tool) pays for at start."""

from __future__ import annotations

from typing import Optional

from toolwire import Server

server = Server("toolwire-plain", "0.1.0")


@server.tool(description="Returns the text it is given.")
def echo(text: str) -> str:
    return text


@server.tool(description="Adds two numbers.")
def add(a: float, b: float) -> dict:
    return {"sum": a + b}


@server.tool(description="Fails with the given message.")
def fail(message: str) -> str:
    raise RuntimeError(message)


def extra(q: str, n: Optional[int] = None) -> str:
    return q


for i in range(100):
    server.add_tool(
        extra,
        name=f"tool_{i:03d}",
        description=f"Extra tool number {i} (benchmarks tools/list).",
        input_schema={
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["q"],
        },
    )

if __name__ == "__main__":
    server.run()
