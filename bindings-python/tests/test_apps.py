"""MCP Apps (SEP-1865) from Python: the greeter example's view and tools (examples/apps), what a
client that renders views sees and what one that does not sees, and what registration refuses."""

from __future__ import annotations

import pytest
from conftest import Client
from toolwire import RegistrationError, Server
from toolwire_greeter import VIEW_URI, add_greeter

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
RENDERS = {"extensions": {UI: {"mimeTypes": [MIME]}}}


def request(client: Client, id: int, method: str, params: dict) -> dict:
    client.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    return client.recv()


def greeter() -> Server:
    server = Server("greeter")
    add_greeter(server)
    return server


def test_a_client_that_renders_views_gets_the_view_and_every_tool() -> None:
    client = Client(greeter())
    init = client.initialize(capabilities=RENDERS)
    assert init["result"]["capabilities"]["extensions"][UI] == {}
    tools = request(client, 1, "tools/list", {})["result"]["tools"]
    assert [t["name"] for t in tools] == ["say_hello", "shout"]
    assert tools[1]["_meta"] == {
        "ui": {"resourceUri": VIEW_URI, "visibility": ["app"]},
        "ui/resourceUri": VIEW_URI,
    }
    view = request(client, 2, "resources/read", {"uri": VIEW_URI})["result"]["contents"]
    assert len(view) == 1 and view[0]["mimeType"] == MIME
    assert view[0]["text"].startswith("<!DOCTYPE html>")
    assert view[0]["_meta"] == {"ui": {"prefersBorder": True}}
    client.call(3, "say_hello", {"name": "Ada"})
    assert client.recv()["result"]["structuredContent"] == {"greeting": "Hello, Ada!", "name": "Ada"}
    client.call(4, "shout", {"text": "hi"})
    assert client.recv()["result"]["structuredContent"] == {"shouted": "HI"}


def test_a_client_without_views_gets_text_and_never_the_app_only_tool() -> None:
    client = Client(greeter())
    client.initialize()
    tools = request(client, 1, "tools/list", {})["result"]["tools"]
    assert [t["name"] for t in tools] == ["say_hello"]
    client.call(2, "say_hello", {"name": "Ada"})
    answer = client.recv()["result"]
    assert answer["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert "structuredContent" not in answer
    client.call(3, "shout", {"text": "hi"})
    assert client.recv()["error"] == {"code": -32602, "message": "Unknown tool: shout"}


def test_what_the_spec_forbids_is_refused_naming_it() -> None:
    server = Server("apps")
    with pytest.raises(RegistrationError, match="ui:// URI"):
        server.add_ui_resource("https://apps/view.html", "<!DOCTYPE html><p>x</p>")
    with pytest.raises(RegistrationError, match="HTML5 document"):
        server.add_ui_resource("ui://apps/view.html", "<p>x</p>")
    with pytest.raises(RegistrationError, match="connectDomains"):
        server.add_ui_resource("ui://apps/view.html", "<!DOCTYPE html>", csp={"connectDomains": ["api.example.com"]})
    with pytest.raises(RegistrationError, match="no view is registered"):

        @server.tool(ui_resource="ui://apps/missing.html")
        def orphan() -> str:
            return "x"

    server.add_ui_resource("ui://apps/hidden.html", "<!DOCTYPE html><p>x</p>", listed=False)
    client = Client(server)
    client.initialize()
    assert request(client, 1, "resources/list", {})["result"]["resources"] == []
    hidden = request(client, 2, "resources/read", {"uri": "ui://apps/hidden.html"})["result"]["contents"]
    assert hidden == [{"uri": "ui://apps/hidden.html", "mimeType": MIME, "text": "<!DOCTYPE html><p>x</p>"}]
    assert server.remove_resource("ui://apps/hidden.html")
