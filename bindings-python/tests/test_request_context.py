"""Resources, prompts and completers get a `Context` as tools do (a parameter annotated
`Context`): progress to the request's token, logging, the client's info, cancellation, and the
lifespan's value."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

import pytest
from toolwire import Context, Server
from toolwire.testing import connect


@contextlib.asynccontextmanager
async def region(server: Server) -> AsyncIterator[str]:
    yield "eu"


def context_server(started: threading.Event, cancelled: threading.Event) -> Server:
    server = Server("ctx", lifespan=region)

    @server.resource("memo://{name}", mime_type="text/plain")
    async def memo(name: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2, "reading")
        await ctx.info({"reading": name})
        client = (ctx.client_info or {}).get("name")
        return f"{name} for {client} in {ctx.lifespan_context} ({ctx.tool_name})"

    @server.resource("memo://slow/item")
    async def slow(ctx: Context) -> str:
        started.set()
        await ctx.cancelled()
        cancelled.set()
        return "too late"

    @server.prompt()
    def greet(who: str, ctx: Context) -> str:
        return f"hello {who} from {(ctx.client_info or {}).get('name')}, wants progress: {ctx.wants_progress}"

    @server.completion(prompt="greet")
    def complete(argument: str, value: str, context: dict[str, str], ctx: Context) -> list[str]:
        return [f"{ctx.tool_name}:{argument}:{value}:{len(context)}:{ctx.lifespan_context}"]

    return server


@pytest.mark.asyncio
async def test_resources_prompts_and_completers_get_the_context() -> None:
    server = context_server(threading.Event(), threading.Event())
    async with connect(server) as client:
        [prompt] = await client.list_prompts()
        assert prompt["arguments"] == [{"name": "who", "required": True}], "ctx is no prompt argument"
        read = await client.request("resources/read", {"uri": "memo://notes", "_meta": {"progressToken": "r"}})
        assert read["contents"][0]["text"] == "notes for toolwire-test-client in eu (memo://notes)"
        progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
        assert progress == [{"progressToken": "r", "progress": 1, "total": 2, "message": "reading"}]
        greeted = await client.get_prompt("greet", {"who": "Ada"})
        assert greeted["messages"][0]["content"]["text"] == "hello Ada from toolwire-test-client, wants progress: False"
        completion = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "who", "value": "A"},
                "context": {"arguments": {"x": "y"}},
            },
        )
        assert completion["completion"]["values"] == ["who:who:A:1:eu"]


def test_a_cancelled_read_sees_it_and_is_not_answered(client_for) -> None:
    started, cancelled = threading.Event(), threading.Event()
    client = client_for(context_server(started, cancelled))
    client.send({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "memo://slow/item"}})
    assert started.wait(10)
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert cancelled.wait(10)
    client.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert client.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    rest = client.finish()
    assert not any("too late" in frame for frame in rest), rest


def test_the_context_parameter_is_found_by_annotation() -> None:
    server = Server("plain")

    @server.prompt()
    def plain(topic: str) -> str:
        return topic

    async def listed() -> list:
        async with connect(server) as client:
            return await client.list_prompts()

    [prompt] = asyncio.run(listed())
    assert prompt["arguments"] == [{"name": "topic", "required": True}]
