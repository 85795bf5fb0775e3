"""The server's lifespan, as in the official SDK: an async context manager entered before
serving, its value reached from tools (`ctx.lifespan_context`, `ctx.request_context.lifespan_context`)
and from resources and prompts (a `Round`'s `lifespan_context`), entered once however many serves
run and exited when the last ends; a failure to enter is the serve's error."""

from __future__ import annotations

import asyncio
import contextlib
import json
import textwrap
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from conftest import INITIALIZE, serve_script
from toolwire import Context, Round, Server
from toolwire.testing import connect


@dataclass
class Pool:
    queries: int = 0
    events: list[str] = field(default_factory=list)

    def query(self, sql: str) -> str:
        self.queries += 1
        return f"{sql} #{self.queries}"


def pooled_server(events: list[str]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        events.append(f"open {server.name}")
        pool = Pool()
        try:
            yield pool
        finally:
            events.append(f"closed after {pool.queries} queries")

    server = Server("pooled", lifespan=lifespan)

    @server.tool()
    def query(sql: str, ctx: Context) -> str:
        return ctx.lifespan_context.query(sql)

    @server.tool()
    async def count(ctx: Context) -> int:
        # The official SDK's spelling.
        return ctx.request_context.lifespan_context.queries

    @server.resource("db://stats")
    def stats(round: Round) -> str:
        return f"queries so far: {round.lifespan_context.queries}"

    @server.prompt()
    def ask(round: Round) -> str:
        return f"pool has {round.lifespan_context.queries} queries"

    return server


@pytest.mark.asyncio
async def test_the_value_reaches_tools_resources_and_prompts_and_is_cleaned_up_once() -> None:
    events: list[str] = []
    server = pooled_server(events)
    async with connect(server) as first, connect(server) as second:
        assert (await first.call_tool("query", {"sql": "select 1"}))["content"][0]["text"] == "select 1 #1"
        assert (await second.call_tool("query", {"sql": "select 2"}))["content"][0]["text"] == "select 2 #2"
        assert (await first.call_tool("count"))["content"][0]["text"] == "2"
        assert (await second.read_resource("db://stats"))["contents"][0]["text"] == "queries so far: 2"
        assert (await first.get_prompt("ask"))["messages"][0]["content"]["text"] == "pool has 2 queries"
        assert events == ["open pooled"]
    assert events == ["open pooled", "closed after 2 queries"]
    # A later serve enters it again, with a fresh value.
    async with connect(server) as again:
        assert (await again.call_tool("query", {"sql": "select 3"}))["content"][0]["text"] == "select 3 #1"
    assert len(events) == 4


@pytest.mark.asyncio
async def test_serve_http_holds_the_lifespan_until_wait_returns() -> None:
    events: list[str] = []
    server = pooled_server(events)
    http = await server.serve_http("127.0.0.1", 0)
    async with connect(server) as client:
        assert (await client.call_tool("query", {"sql": "x"}))["content"][0]["text"] == "x #1"
    assert events == ["open pooled"], "the HTTP server still holds it"
    http.stop()
    await http.wait()
    assert events == ["open pooled", "closed after 1 queries"]


@pytest.mark.asyncio
async def test_async_with_server_for_a_transport_of_your_own() -> None:
    events: list[str] = []
    server = pooled_server(events)
    async with server:
        assert events == ["open pooled"]
        session = server.session()
        session.close()
    assert events == ["open pooled", "closed after 0 queries"]


@pytest.mark.asyncio
async def test_a_lifespan_that_fails_to_enter_is_the_serves_error() -> None:
    @contextlib.asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise ConnectionError("database unreachable")
        yield  # pragma: no cover

    server = Server("broken", lifespan=broken)
    with pytest.raises(ConnectionError, match="database unreachable"):
        async with connect(server):
            pass
    with pytest.raises(ConnectionError, match="database unreachable"):
        await server.serve_http("127.0.0.1", 0)
    # Not entered, so nothing is held: a later serve tries again.
    with pytest.raises(ConnectionError):
        async with server:
            pass

    def not_a_manager(server: Server) -> int:
        return 3

    with pytest.raises(TypeError, match="async context manager"):
        async with Server("wrong", lifespan=not_a_manager):  # type: ignore[arg-type]
            pass


@pytest.mark.asyncio
async def test_concurrent_serves_enter_once() -> None:
    entered = 0
    started = asyncio.Event()
    gate = asyncio.Event()

    @contextlib.asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[str]:
        nonlocal entered
        entered += 1
        started.set()
        await gate.wait()
        yield "ready"

    server = Server("slow", lifespan=slow)

    @server.tool()
    def value(ctx: Context) -> str:
        return ctx.lifespan_context

    async def use() -> str:
        async with connect(server) as client:
            return (await client.call_tool("value"))["content"][0]["text"]

    both = asyncio.gather(use(), use())
    await started.wait()
    gate.set()
    assert await both == ["ready", "ready"]
    assert entered == 1


def test_run_enters_and_exits_around_stdio(tmp_path) -> None:
    script = tmp_path / "server.py"
    script.write_text(
        textwrap.dedent(
            """
            import contextlib, sys
            from toolwire import Context, Server

            @contextlib.asynccontextmanager
            async def lifespan(server):
                print("opened", file=sys.stderr, flush=True)
                try:
                    yield {"region": "eu"}
                finally:
                    print("closed", file=sys.stderr, flush=True)

            server = Server("stdio", lifespan=lifespan)

            @server.tool()
            def region(ctx: Context) -> str:
                return ctx.lifespan_context["region"]

            server.run()
            print("returned", file=sys.stderr, flush=True)
            """
        )
    )
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "region", "arguments": {}}}
    done, answers = serve_script(script, [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call])
    assert done.returncode == 0, done.stderr
    assert next(a for a in answers if a.get("id") == 1)["result"]["content"][0]["text"] == "eu"
    lines = [line for line in done.stderr.decode().splitlines() if line in ("opened", "closed", "returned")]
    assert lines == ["opened", "closed", "returned"], done.stderr


def _call(session, request_id: int, name: str, arguments: dict) -> dict:
    session.handle_frame(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
    )
    text = session.recv()
    assert text is not None
    return json.loads(text)


def _open(server: Server):
    session = server.session()
    session.handle_frame(json.dumps(INITIALIZE))
    assert session.recv() is not None
    session.handle_frame(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return session


def test_a_call_on_a_session_of_your_own_starts_it_and_stop_ends_it() -> None:
    # No serve holds it: the first call starts it (and waits for it); `stop()` ends it.
    events: list[str] = []
    closed = threading.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        events.append("open")
        try:
            yield Pool()
        finally:
            events.append("closed")
            closed.set()

    server = Server("unheld", lifespan=lifespan)

    @server.tool()
    def query(sql: str, ctx: Context) -> str:
        return ctx.lifespan_context.query(sql)

    session = _open(server)
    assert events == []
    assert _call(session, 2, "query", {"sql": "x"})["result"]["content"][0]["text"] == "x #1"
    assert events == ["open"]
    server.stop()
    assert closed.wait(10)
    assert events == ["open", "closed"]
    session.close()


def test_a_failed_start_is_each_waiting_calls_error() -> None:
    @contextlib.asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise ConnectionError("database unreachable")
        yield  # pragma: no cover

    server = Server("broken", lifespan=broken)

    @server.tool()
    def value() -> str:
        return "never"

    session = _open(server)
    answer = _call(session, 2, "value", {})["result"]
    assert answer["isError"] is True
    assert answer["content"][0]["text"] == "the server's lifespan failed to start: database unreachable"
    session.close()


@pytest.mark.asyncio
async def test_it_is_entered_and_exited_in_one_task_of_its_own() -> None:
    # A context manager with a task group (anyio's cancel scopes) must exit in the task that
    # entered it, whichever serve let go last.
    tasks: list[object] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        tasks.append(asyncio.current_task())
        try:
            yield None
        finally:
            tasks.append(asyncio.current_task())

    server = Server("one-task", lifespan=lifespan)
    first = connect(server)
    await first.__aenter__()
    async with connect(server):
        pass
    await first.__aexit__(None, None, None)
    assert len(tasks) == 2
    assert tasks[0] is tasks[1]
    assert tasks[0] is not asyncio.current_task()
