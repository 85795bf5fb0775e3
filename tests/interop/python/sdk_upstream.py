"""A server written with the official MCP Python SDK (PyPI `mcp`), for toolwire to proxy.

`python sdk_upstream.py` serves stdio; `python sdk_upstream.py http PORT` serves Streamable
HTTP on 127.0.0.1:PORT/mcp (uvicorn says when it listens, on stderr); `python sdk_upstream.py
https PORT CERT KEY` serves it over TLS with that certificate and key (PEM files).
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, PromptReference
from pydantic import BaseModel

server = MCPServer("sdk-upstream", version="1.0")


@server.tool()
def echo(text: str) -> str:
    """Returns the text it is given."""
    return f"sdk echo: {text}"


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Counts to n, reporting each step as progress."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted to {n}"


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Asks the user for their name."""
    answer = await ctx.elicit("Your name?", Name)
    if answer.action == "accept":
        return f"hello, {answer.data.name}"
    return f"no name ({answer.action})"


@server.tool()
async def die(ctx: Context) -> str:
    """Reports progress, then the process exits: a server that dies in the middle of a call."""
    await ctx.report_progress(1, 2, "about to die")
    sys.stdout.flush()
    os._exit(3)


@server.resource("docs://readme")
def readme() -> str:
    """The upstream's readme."""
    return "Read me, from the SDK."


@server.prompt()
def brief(city: str) -> str:
    """A briefing on a city."""
    return f"Brief me on {city}."


@server.completion()
async def complete(ref, argument, context):
    """Cities for `brief`'s `city`."""
    if isinstance(ref, PromptReference) and ref.name == "brief" and argument.name == "city":
        cities = ["Oslo", "Osaka", "Ottawa", "Lima"]
        return Completion(values=[c for c in cities if c.lower().startswith(argument.value.lower())])
    return None


def serve_https(port: int, cert: str, key: str) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, ssl_certfile=cert, ssl_keyfile=key, log_level="info")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["https"]:
        serve_https(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        server.run()
