"""Who sees what, from Python: tools, resources and prompts that require scopes or tags (the
token validator's), and a `visible_when` rule; a hidden item answers exactly as a missing one."""

from __future__ import annotations

import json
import urllib.request
from typing import Any, Optional

import pytest
from conftest import Client
from toolwire import CatalogItem, Server, Viewer

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

TOKENS = {
    "guest": {"subject": "gus", "scopes": []},
    "admin": {"subject": "ada", "scopes": ["admin"], "tags": ["hr", "staff"]},
    # Ada's down-scoped token (say, handed to a sub-agent): the same subject, no scopes.
    "ada-narrow": {"subject": "ada", "scopes": []},
}


# --8<-- [start:server]
def notes_server() -> Server:
    server = Server("notes")

    @server.tool()
    def search(query: str) -> str:
        """Searches the notes."""
        return f"found {query}"

    @server.tool(required_scopes=["admin"])
    def admin_reset() -> str:
        """Deletes every note."""
        return "reset"

    @server.resource("memo://payroll", required_tags=["hr"])
    def payroll() -> str:
        return "salaries"

    @server.prompt(required_tags=["staff"])
    def review(topic: str) -> str:
        return f"Review {topic}"

    return server


def validate(token: str) -> Optional[dict[str, Any]]:
    # A real validator checks a signed token; its scopes and tags decide what the client sees.
    return TOKENS.get(token)


# --8<-- [end:server]


def post(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {**HEADERS, "authorization": f"Bearer {token}", "mcp-protocol-version": "2025-11-25"}
    request = urllib.request.Request(url, body, headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    # An answer not ready at once comes as one SSE event.
    data = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
    return json.loads(data[-1] if data else text)


@pytest.mark.asyncio
async def test_each_token_sees_what_its_scopes_and_tags_allow() -> None:
    import asyncio

    http = await notes_server().serve_http("127.0.0.1", 0, stateless=True, token_validator=validate)
    try:

        def ask(token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
            return post(http.url, token, method, params)

        async def names(token: str, method: str, key: str, field: str) -> list[str]:
            answer = await asyncio.to_thread(ask, token, method, {})
            return [item[field] for item in answer["result"][key]]

        assert await names("guest", "tools/list", "tools", "name") == ["search"]
        assert await names("admin", "tools/list", "tools", "name") == ["admin_reset", "search"]
        assert await names("guest", "prompts/list", "prompts", "name") == []
        assert await names("admin", "prompts/list", "prompts", "name") == ["review"]
        assert await names("admin", "resources/list", "resources", "uri") == ["memo://payroll"]

        hidden = await asyncio.to_thread(ask, "guest", "tools/call", {"name": "admin_reset", "arguments": {}})
        missing = await asyncio.to_thread(ask, "guest", "tools/call", {"name": "nope", "arguments": {}})
        assert hidden["error"]["code"] == missing["error"]["code"] == -32602
        unnamed = hidden["error"]["message"].replace("admin_reset", "X")
        assert unnamed == missing["error"]["message"].replace("nope", "X")
        read = await asyncio.to_thread(ask, "guest", "resources/read", {"uri": "memo://payroll"})
        assert read["error"]["code"] == -32002
        called = await asyncio.to_thread(ask, "admin", "tools/call", {"name": "admin_reset", "arguments": {}})
        assert called["result"]["content"][0]["text"] == "reset"
    finally:
        http.stop()
        await http.wait()


@pytest.mark.asyncio
async def test_each_request_of_a_session_is_screened_with_its_own_token() -> None:
    import asyncio

    http = await notes_server().serve_http("127.0.0.1", 0, token_validator=validate)
    try:

        def session_post(token: str, session: Optional[str], message: dict[str, Any]) -> tuple[dict[str, Any], str]:
            headers = {**HEADERS, "authorization": f"Bearer {token}", "mcp-protocol-version": "2025-11-25"}
            if session is not None:
                headers["mcp-session-id"] = session
            request = urllib.request.Request(http.url, json.dumps(message).encode(), headers, method="POST")
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
                opened = response.headers.get("mcp-session-id") or session or ""
            data = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
            return (json.loads(data[-1] if data else text) if text else {}), opened

        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        _, session = await asyncio.to_thread(session_post, "admin", None, init)
        await asyncio.to_thread(
            session_post, "admin", session, {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        wide, _ = await asyncio.to_thread(session_post, "admin", session, listing)
        narrow, _ = await asyncio.to_thread(session_post, "ada-narrow", session, listing)
        assert [t["name"] for t in wide["result"]["tools"]] == ["admin_reset", "search"]
        assert [t["name"] for t in narrow["result"]["tools"]] == ["search"]
    finally:
        http.stop()
        await http.wait()


def test_a_rule_decides_per_request_and_sees_the_item_and_the_client() -> None:
    server = notes_server()

    @server.tool()
    def beta_summarize() -> str:
        return "summary"

    asked: list[tuple[CatalogItem, Viewer]] = []

    # --8<-- [start:rule]
    @server.visible_when
    def beta_only_for_beta(item: CatalogItem, viewer: Viewer) -> bool:
        asked.append((item, viewer))
        return not item.name.startswith("beta_") or "beta" in viewer.tags

    # --8<-- [end:rule]

    client = Client(server)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    tools = client.recv()["result"]["tools"]
    # admin_reset needs a scope this client lacks; the rule hides the beta tool.
    assert [t["name"] for t in tools] == ["search"]
    item, viewer = next((i, v) for i, v in asked if i.name == "beta_summarize")
    assert item == CatalogItem(kind="tool", name="beta_summarize")
    assert viewer.client_info == {"name": "pytest", "version": "1"}
    assert viewer.protocol_version == "2025-11-25" and viewer.subject is None
    # The rule is not asked about what the requirements already hid.
    assert all(i.name != "admin_reset" for i, _ in asked)

    client.call(2, "beta_summarize")
    assert client.recv()["error"]["message"] == "Unknown tool: beta_summarize"


def test_a_rule_that_raises_hides_what_it_was_asked_about() -> None:
    server = notes_server()

    @server.visible_when
    def broken(item: CatalogItem, viewer: Viewer) -> bool:
        raise RuntimeError("the feature-flag service is down")

    client = Client(server)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert client.recv()["result"]["tools"] == []
    # The server keeps serving.
    client.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert client.recv()["id"] == 2


def test_requirements_must_be_lists_and_rules_plain_functions() -> None:
    server = Server("strict")
    with pytest.raises(TypeError, match="list of strings"):
        server.tool(required_scopes="admin")(lambda: "x")  # type: ignore[arg-type]

    async def rule(item: CatalogItem, viewer: Viewer) -> bool:
        return True

    with pytest.raises(TypeError, match="plain function"):
        server.visible_when(rule)  # type: ignore[arg-type]


def test_a_rule_that_is_async_underneath_hides_everything() -> None:
    server = notes_server()

    async def rule(item: CatalogItem, viewer: Viewer) -> bool:
        return True

    # A plain function that returns a coroutine passes the registration check; its awaitable
    # is refused when the rule is asked.
    server.visible_when(lambda item, viewer: rule(item, viewer))  # type: ignore[arg-type,return-value]
    client = Client(server)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert client.recv()["result"]["tools"] == []


def test_a_view_that_requires_a_tag_is_neither_listed_nor_read_without_it() -> None:
    server = notes_server()
    server.add_ui_resource(
        "ui://admin/panel.html", "<!DOCTYPE html><html><body>panel</body></html>", required_tags=["staff"]
    )
    client = Client(server)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}})
    assert client.recv()["result"]["resources"] == []
    client.send({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "ui://admin/panel.html"}})
    assert client.recv()["error"]["code"] == -32002
