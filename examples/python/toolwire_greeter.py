"""MCP Apps: a greeting shown in an interactive view (examples/apps/greeter.html), every language's
example of the extension (its conformance server serves it too). `say_hello` links to the view; the
view calls `shout` back through the host, a tool only the view may call, so clients that render no
views never see it.

Run it alone with `python examples/python/toolwire_greeter.py PORT` (Streamable HTTP on 127.0.0.1).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from toolwire import Context, Server, Text, ToolResult

VIEW_URI = "ui://greeter/view.html"
VIEW_HTML = Path(__file__).resolve().parent.parent / "apps" / "greeter.html"


def add_greeter(server: Server) -> None:
    """The greeter's view and its two tools."""
    server.add_ui_resource(
        VIEW_URI,
        VIEW_HTML.read_text(encoding="utf-8"),
        name="greeter-view",
        description="Shows a greeting, and shouts it on a click",
        prefers_border=True,
    )

    @server.tool(ui_resource=VIEW_URI)
    def say_hello(name: str, ctx: Context) -> Any:
        """Greets someone by name (in a view, where the client shows them)."""
        greeting = f"Hello, {name}!"
        # The text is for the model and for clients without views; the view reads the structure.
        if ctx.client_renders_apps:
            return ToolResult([Text(greeting)], structured={"greeting": greeting, "name": name})
        return greeting

    @server.tool(ui_resource=VIEW_URI, visibility=["app"])
    def shout(text: str) -> Any:
        """The text in capitals (called by the greeter's view)."""
        return ToolResult([Text(text.upper())], structured={"shouted": text.upper()})


if __name__ == "__main__":
    server = Server("greeter", "1.0.0")
    add_greeter(server)
    server.run_http(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
