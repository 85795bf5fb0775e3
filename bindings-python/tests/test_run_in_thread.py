"""`run_in_thread=False`: a plain `def` tool run where its call is answered, without the hop to a
worker thread; the default (a worker thread) and what stays the same either way."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import asgi_post
from mcp import Client
from toolwire import Context, Server, ToolError


def result_of(answer: dict) -> dict:
    assert "result" in answer, answer
    return answer["result"]


def os_thread_name() -> str:
    """The OS's name for the calling thread (Linux; elsewhere the test that needs it skips)."""
    comm = Path(f"/proc/self/task/{threading.get_native_id()}/comm")
    if not comm.exists():
        pytest.skip("thread names are read from /proc")
    return comm.read_text().strip()


def test_in_a_session_of_ones_own_it_runs_on_the_thread_that_hands_the_request_over(client_for) -> None:
    """`server.session()`: the frame is handled on the caller's thread, and the function with it;
    the default goes to a worker thread."""
    server = Server("t")
    seen: dict[str, int] = {}

    @server.tool()
    def threaded() -> str:
        seen["threaded"] = threading.get_ident()
        return "threaded"

    @server.tool(run_in_thread=False)
    def in_place() -> str:
        seen["in_place"] = threading.get_ident()
        return "in place"

    client = client_for(server)
    client.call(1, "in_place")
    # Ran before `send` returned: no worker was involved.
    assert seen.get("in_place") == threading.get_ident()
    assert result_of(client.recv())["content"][0]["text"] == "in place"
    client.call(2, "threaded")
    assert result_of(client.recv())["content"][0]["text"] == "threaded"
    assert seen["threaded"] != threading.get_ident()


def test_arguments_results_errors_and_context_are_as_in_a_thread(client_for) -> None:
    server = Server("t")

    @server.tool(run_in_thread=False)
    def add(a: int, b: int, ctx: Context) -> dict:
        ctx.report_progress(1, 1)
        ctx.info(f"adding {a} and {b}")
        return {"sum": a + b, "tool": ctx.tool_name}

    @server.tool(run_in_thread=False)
    def refuse(why: str) -> str:
        raise ToolError(why)

    @server.tool(run_in_thread=False)
    def crash() -> str:
        raise RuntimeError("broken on purpose")

    client = client_for(server)
    client.call(1, "add", {"a": 2, "b": 3}, meta={"progressToken": "p"})
    frames = [client.recv()]
    while frames[-1].get("id") != 1:
        frames.append(client.recv())
    progress = [f for f in frames if f.get("method") == "notifications/progress"]
    assert progress and progress[0]["params"]["progressToken"] == "p", frames
    assert result_of(frames[-1])["structuredContent"] == {"sum": 5, "tool": "add"}
    client.call(2, "refuse", {"why": "not today"})
    refused = result_of(client.recv())
    assert refused["isError"] is True and refused["content"][0]["text"] == "not today"
    client.call(3, "crash")
    crashed = result_of(client.recv())
    assert crashed["isError"] is True and crashed["content"][0]["text"] == "broken on purpose"


def test_a_timeout_is_refused_with_it_and_async_tools_are_unchanged(client_for) -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="tool 'quick': timeout= needs run_in_thread=True"):

        @server.tool(run_in_thread=False, timeout=5)
        def quick() -> str:
            return "never registered"

    assert "quick" not in server.tool_names()

    @server.tool(run_in_thread=False, timeout=5)
    async def later(text: str) -> str:
        await asyncio.sleep(0)
        return f"later: {text}"

    client = client_for(server)
    client.call(1, "later", {"text": "hi"})
    assert result_of(client.recv())["content"][0]["text"] == "later: hi"


@pytest.mark.asyncio
async def test_over_the_built_in_http_server_it_runs_on_the_engines_thread_which_keeps_its_state() -> None:
    """Driven by the official SDK client, through a middleware: the engine's runtime thread takes
    the GIL for the function and runs it there, with the same Python thread state each time (a
    `threading.local` value outlives the call)."""
    server = Server("t")
    local = threading.local()
    seen: dict[str, Any] = {"calls": [], "middleware": 0}

    @server.middleware
    async def counting(request: dict, call_next: Any) -> Any:
        seen["middleware"] += 1
        return await call_next()

    @server.tool(run_in_thread=False)
    def shout(text: str) -> str:
        local.count = getattr(local, "count", 0) + 1
        seen["calls"].append((os_thread_name(), local.count))
        return text.upper()

    http = await server.serve_http("127.0.0.1", 0)
    try:
        async with Client(http.url, mode="legacy") as client:
            for text in ("a", "b", "c"):
                assert (await client.call_tool("shout", {"text": text})).content[0].text == text.upper()
    finally:
        http.stop()
        await http.wait()
    assert seen["calls"] == [("toolwire", 1), ("toolwire", 2), ("toolwire", 3)], seen
    assert seen["middleware"] >= 3


def test_a_keyboard_interrupt_raised_in_place_on_the_apps_loop_leaves_the_loop() -> None:
    """Mounted, the function runs on the loop's thread: a Ctrl-C landing in it ends the call with
    an error and is raised out of the loop, as from a task (not swallowed as the tool's error)."""
    server = Server("t")

    @server.tool(run_in_thread=False)
    def interrupted() -> str:
        raise KeyboardInterrupt

    app = server.asgi_app()
    answers: list[dict] = []

    async def main() -> None:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        opened = await asgi_post(app, initialize, [])
        session = [(b"mcp-session-id", dict(opened[0]["headers"])[b"mcp-session-id"])]
        session.append((b"mcp-protocol-version", b"2025-11-25"))
        await asgi_post(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "interrupted", "arguments": {}}}
        answers.append(json.loads((await asgi_post(app, call, session))[-1]["body"]))
        # The interrupt comes out of the loop at its next turn; a loop that went on times out.
        await asyncio.wait_for(asyncio.Event().wait(), timeout=10)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert result_of(answers[0])["isError"] is True
