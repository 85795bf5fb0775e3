"""Resources, resource templates, prompts and completion registered from Python."""

from __future__ import annotations

import asyncio
import base64
import enum
from typing import Annotated, Literal

import pytest
from annotated_types import MinLen
from conftest import Client
from toolwire import Image, RegistrationError, ResourceNotFound, Server


def request(client, id: int, method: str, params: dict) -> dict:
    client.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    return client.recv()


def catalog_server() -> Server:
    server = Server("catalog")

    @server.resource("memo://readme", name="readme", mime_type="text/plain")
    def readme() -> str:
        """The read-me."""
        return "read me"

    @server.resource("memo://logo", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return b"\x89PNG"

    @server.resource("memo://notes/{day}", name="notes", mime_type="text/plain")
    async def notes(day: str, uri: str) -> str:
        await asyncio.sleep(0.01)
        if day == "never":
            raise ResourceNotFound(f"no notes for {day}")
        return f"notes of {day} at {uri}"

    @server.resource("memo://broken", name="broken")
    def broken() -> str:
        raise RuntimeError("disk on fire")

    @server.prompt(description="Greets someone")
    def greet(name: str, style: str = "plain") -> str:
        return f"Hello {name} ({style})"

    @server.prompt()
    async def show(url: str) -> list:
        return [Image("AAAA", "image/png"), {"role": "assistant", "content": f"Seen {url}"}]

    @server.completion(prompt="greet")
    def complete_greet(argument: str, value: str, context: dict) -> list[str]:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]

    return server


def test_capabilities_follow_what_is_registered() -> None:
    caps = Client(catalog_server()).initialize()["result"]["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["completions"] == {}
    caps = Client(Server("plain")).initialize()["result"]["capabilities"]
    assert "resources" not in caps and "prompts" not in caps


def test_lists_and_reads(client_for) -> None:
    client = client_for(catalog_server())
    listed = request(client, 1, "resources/list", {})["result"]["resources"]
    assert [r["uri"] for r in listed] == ["memo://broken", "memo://logo", "memo://readme"]
    assert listed[2]["description"] == "The read-me." and listed[2]["mimeType"] == "text/plain"
    templates = request(client, 2, "resources/templates/list", {})["result"]["resourceTemplates"]
    assert templates == [{"uriTemplate": "memo://notes/{day}", "name": "notes", "mimeType": "text/plain"}]
    text = request(client, 3, "resources/read", {"uri": "memo://readme"})["result"]["contents"]
    assert text == [{"uri": "memo://readme", "mimeType": "text/plain", "text": "read me"}]
    blob = request(client, 4, "resources/read", {"uri": "memo://logo"})["result"]["contents"][0]
    assert base64.b64decode(blob["blob"]) == b"\x89PNG" and blob["mimeType"] == "image/png"
    notes = request(client, 5, "resources/read", {"uri": "memo://notes/monday"})["result"]["contents"][0]
    assert notes["text"] == "notes of monday at memo://notes/monday"


def test_missing_and_failing_resources(client_for) -> None:
    client = client_for(catalog_server())
    for id, uri in ((1, "memo://nothing"), (2, "memo://notes/never")):
        error = request(client, id, "resources/read", {"uri": uri})["error"]
        assert error["code"] == -32002 and error["data"] == {"uri": uri}
    error = request(client, 3, "resources/read", {"uri": "memo://broken"})["error"]
    assert error["code"] == -32603 and "disk on fire" in error["message"]
    assert request(client, 4, "resources/read", {})["error"]["code"] == -32602


def test_returned_values_are_read_by_the_rule_every_language_shares(client_for) -> None:
    """Core's `from_returned` rules (the same in Node): bytes anywhere a blob can be, the
    registered MIME type as the default, and a value that says nothing refused saying what to
    return."""
    server = Server("returns")

    @server.resource("memo://mixed", mime_type="text/plain")
    def mixed() -> list:
        return ["one", b"\x00\x01", {"blob": bytearray(b"\x02"), "mime_type": "a/b"}, {"text": "t", "uri": "memo://x"}]

    @server.resource("memo://number")
    def number() -> int:
        return 42

    @server.prompt()
    def described() -> dict:
        return {"description": "d", "messages": ["hi", {"role": "assistant", "content": Image("AAAA", "image/png")}]}

    @server.prompt()
    def nothing() -> None:
        return None

    client = client_for(server)
    contents = request(client, 1, "resources/read", {"uri": "memo://mixed"})["result"]["contents"]
    assert contents == [
        {"uri": "memo://mixed", "mimeType": "text/plain", "text": "one"},
        {"uri": "memo://mixed", "mimeType": "text/plain", "blob": base64.b64encode(b"\x00\x01").decode()},
        {"uri": "memo://mixed", "mimeType": "a/b", "blob": base64.b64encode(b"\x02").decode()},
        {"uri": "memo://x", "mimeType": "text/plain", "text": "t"},
    ]
    error = request(client, 2, "resources/read", {"uri": "memo://number"})["error"]
    assert error["code"] == -32603 and "a resource handler returned a number; return text, bytes" in error["message"]
    got = request(client, 3, "prompts/get", {"name": "described"})["result"]
    assert got == {
        "description": "d",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
        ],
    }
    error = request(client, 4, "prompts/get", {"name": "nothing"})["error"]
    assert error["code"] == -32603 and "a prompt message cannot be nothing (null)" in error["message"]


def test_prompts_with_argument_checks(client_for) -> None:
    client = client_for(catalog_server())
    prompts = request(client, 1, "prompts/list", {})["result"]["prompts"]
    greet = next(p for p in prompts if p["name"] == "greet")
    assert greet["arguments"] == [{"name": "name", "required": True}, {"name": "style", "required": False}]
    got = request(client, 2, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})["result"]
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello Ada (plain)"}}]
    shown = request(client, 3, "prompts/get", {"name": "show", "arguments": {"url": "x"}})["result"]["messages"]
    assert shown[0]["content"]["type"] == "image"
    assert shown[1] == {"role": "assistant", "content": {"type": "text", "text": "Seen x"}}
    for id, params in (
        (4, {"name": "greet", "arguments": {}}),
        (5, {"name": "greet", "arguments": {"name": 3}}),
        (6, {"name": "greet", "arguments": {"name": "a", "mood": "b"}}),
        (7, {"name": "nope"}),
    ):
        assert request(client, id, "prompts/get", params)["error"]["code"] == -32602, params


def test_completion(client_for) -> None:
    client = client_for(catalog_server())
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}
    completion = request(client, 1, "completion/complete", params)["result"]["completion"]
    assert completion == {"values": ["ada", "alan"], "hasMore": False}
    params["argument"]["name"] = "nope"
    assert request(client, 2, "completion/complete", params)["error"]["code"] == -32602


def test_subscriptions_and_updates(client_for) -> None:
    server = catalog_server()
    client = client_for(server)
    assert request(client, 1, "resources/subscribe", {"uri": "memo://readme"})["result"] == {}
    server.notify_resource_updated("memo://logo")  # not subscribed: nothing
    server.notify_resource_updated("memo://readme")
    assert client.recv() == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "memo://readme"},
    }
    assert request(client, 2, "resources/unsubscribe", {"uri": "memo://readme"})["result"] == {}
    assert request(client, 4, "resources/subscribe", {"uri": "memo://logo"})["result"] == {}
    # Updates reach the session in order: had the unsubscribe failed, readme's would come first.
    server.notify_resource_updated("memo://readme")
    server.notify_resource_updated("memo://logo")
    assert client.recv()["params"] == {"uri": "memo://logo"}
    assert request(client, 3, "ping", {}) == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_registration_errors_and_list_changed(client_for) -> None:
    server = catalog_server()
    # Every refused definition is a RegistrationError, as a refused tool is.
    with pytest.raises(RegistrationError, match="already registered"):
        server.add_resource(lambda: "x", "memo://readme", name="again")
    with pytest.raises(RegistrationError, match="template"):
        server.add_resource(lambda: "x", "memo://{a}{b}", name="bad")
    with pytest.raises(ValueError):
        server.completion()
    client = client_for(server)
    server.add_resource(lambda: "new", "memo://new", name="new")
    assert client.recv()["method"] == "notifications/resources/list_changed"
    assert server.remove_prompt("show")
    assert client.recv()["method"] == "notifications/prompts/list_changed"


def test_prompt_arguments_have_titles_and_descriptions(client_for) -> None:
    server = Server("t")

    @server.prompt(arguments={"city": {"title": "City"}, "style": {"description": "How to write it"}})
    def weather(city: str, style: Annotated[str, "ignored: arguments= says"] = "plain", days: str = "1") -> str:
        """Weather for a city.

        Args:
            city: The city to describe.
            days: How many days ahead.
        """
        return f"{city} {style} {days}"

    with pytest.raises(RegistrationError, match="nowhere"):
        server.add_prompt(weather, name="other", arguments={"nowhere": {"title": "x"}})

    client = client_for(server)
    client.send({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"})
    (prompt,) = client.recv()["result"]["prompts"]
    assert prompt["description"] == "Weather for a city."
    assert prompt["arguments"] == [
        {"name": "city", "title": "City", "description": "The city to describe.", "required": True},
        {"name": "style", "description": "How to write it", "required": False},
        {"name": "days", "description": "How many days ahead.", "required": False},
    ]


try:
    from pydantic import Field as _Field

    def _styled_greeting(
        name: str = _Field(description="Who to greet", title="Name"),
        style: str = _Field("plain", description="How"),
    ) -> str:
        return f"Hello {name} ({style})"
except ImportError:  # pragma: no cover - pydantic is optional
    _styled_greeting = None  # type: ignore[assignment]


def test_prompt_arguments_from_pydantic_fields() -> None:
    if _styled_greeting is None:
        pytest.skip("pydantic is not installed")
    from conftest import Client
    from toolwire import Server

    server = Server("prompts")
    server.add_prompt(_styled_greeting, name="greet")
    client = Client(server)
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"})
    (prompt,) = client.recv()["result"]["prompts"]
    assert prompt["arguments"] == [
        {"name": "name", "title": "Name", "description": "Who to greet", "required": True},
        {"name": "style", "description": "How", "required": False},
    ]
    client.send(
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "greet", "arguments": {"name": "Ada"}}}
    )
    messages = client.recv()["result"]["messages"]
    assert messages == [{"role": "user", "content": {"type": "text", "text": "Hello Ada (plain)"}}]


class Style(enum.Enum):
    short = "short"
    long = "long"


async def test_prompt_arguments_are_checked_converted_and_completed_from_their_annotations() -> None:
    from toolwire.testing import McpError, connect

    server = Server("t")
    seen: list[tuple[str, str, Style]] = []

    @server.prompt()
    def trip(city: Annotated[str, MinLen(2)], unit: Literal["C", "F"] = "C", style: Style = Style.short) -> str:
        seen.append((city, unit, style))
        return f"{city} {unit} {style.value}"

    async with connect(server) as client:
        with pytest.raises(McpError) as refused:
            await client.get_prompt("trip", {"city": "O", "unit": "K", "style": "medium"})
        assert refused.value.code == -32602
        assert refused.value.message.startswith('Invalid arguments for prompt "trip":')
        for pointer in ("/city", "/unit", "/style"):
            assert f"at {pointer}:" in refused.value.message
        assert seen == [], "a refused render does not reach the function"

        rendered = await client.get_prompt("trip", {"city": "Oslo", "unit": "F", "style": "long"})
        assert rendered["messages"][0]["content"]["text"] == "Oslo F long"
        assert seen == [("Oslo", "F", Style.long)], "an Enum argument arrives as its member"

        ref = {"type": "ref/prompt", "name": "trip"}
        assert (await client.complete(ref, "unit", ""))["values"] == ["C", "F"]
        assert (await client.complete(ref, "style", "l"))["values"] == ["long"]
        assert (await client.complete(ref, "city", "O"))["values"] == []

    @server.completion(prompt="trip")
    def cities(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return ["Oslo", "Paris"] if argument == "city" else []

    async with connect(server) as client:
        # A completer of the user's own answers instead.
        assert (await client.complete({"type": "ref/prompt", "name": "trip"}, "city", ""))["values"] == [
            "Oslo",
            "Paris",
        ]


def test_a_prompt_argument_that_is_not_a_string_is_refused_at_registration() -> None:
    server = Server("t")

    def plan(city: str, days: int = 3) -> str:
        return f"{days} days in {city}"

    with pytest.raises(RegistrationError, match=r"prompt 'plan': argument 'days' is annotated <class 'int'>"):
        server.add_prompt(plan)
