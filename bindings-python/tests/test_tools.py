"""Tools as seen from Python: handlers, results, context, errors, limits, serving."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
import threading
import time

import pytest
from conftest import Client
from toolwire import (
    CapabilityError,
    Context,
    Image,
    RegistrationError,
    Server,
    Text,
    ToolError,
    ToolResult,
)


def result_of(answer: dict) -> dict:
    assert "result" in answer, answer
    return answer["result"]


def text_of(answer: dict) -> str:
    return result_of(answer)["content"][0]["text"]


class Size(enum.Enum):
    S = "s"
    L = "l"


@dataclasses.dataclass
class Box:
    width: int
    size: Size = Size.S


def test_sync_and_async_handlers_with_converted_arguments(client_for) -> None:
    server = Server("t")

    @server.tool()
    def describe(box: Box, tags: list[str], size: Size = Size.L) -> str:
        assert isinstance(box, Box) and isinstance(box.size, Size) and isinstance(size, Size)
        return f"{box.width} {box.size.value} {size.value} {','.join(tags)}"

    @server.tool()
    async def later(n: int) -> dict:
        await asyncio.sleep(0.01)
        return {"n": n * 2}

    client = client_for(server)
    client.call(1, "describe", {"box": {"width": 3, "size": "l"}, "tags": ["a", "b"]})
    assert text_of(client.recv()) == "3 l l a,b"
    client.call(2, "later", {"n": 21})
    assert result_of(client.recv())["structuredContent"] == {"n": 42}


def test_return_value_forms(client_for) -> None:
    server = Server("t")

    @server.tool()
    def blocks() -> list:
        return [Text("a"), Image("AAAA", "image/png")]

    @server.tool()
    def full() -> ToolResult:
        return ToolResult(content=[Text("custom")], structured={"k": 1})

    @server.tool()
    def data() -> Box:
        return Box(2)

    @server.tool()
    def number() -> int:
        return 7

    @server.tool()
    def nothing() -> None:
        return None

    client = client_for(server)
    client.call(1, "blocks")
    assert result_of(client.recv())["content"][1] == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    client.call(2, "full")
    assert result_of(client.recv()) == {"content": [{"type": "text", "text": "custom"}], "structuredContent": {"k": 1}}
    client.call(3, "data")
    assert result_of(client.recv())["structuredContent"] == {"width": 2, "size": "s"}
    client.call(4, "number")
    assert text_of(client.recv()) == "7"
    client.call(5, "nothing")
    assert result_of(client.recv()) == {"content": []}


def test_exceptions_become_error_results(client_for, caplog) -> None:
    server = Server("t")

    @server.tool()
    def expected() -> str:
        raise ToolError("not today")

    @server.tool()
    def unexpected() -> str:
        raise KeyError("secret_key")

    @server.tool()
    async def unexpected_async() -> str:
        raise ValueError("async failure")

    client = client_for(server)
    client.call(1, "expected")
    assert result_of(client.recv()) == {"content": [{"type": "text", "text": "not today"}], "isError": True}
    client.call(2, "unexpected")
    answer = result_of(client.recv())
    assert answer["isError"] is True and "secret_key" in answer["content"][0]["text"]
    assert "Traceback" not in json.dumps(answer)
    client.call(3, "unexpected_async")
    assert text_of(client.recv()) == "async failure"
    assert any("tool unexpected raised" in r.getMessage() for r in caplog.records)


def test_async_outcomes_and_conversions(client_for) -> None:
    # An `async def` tool hands its outcome over from its own coroutine: every way it can end
    # must reach the client, and the session must go on serving.
    server = Server("t")

    @server.tool()
    async def refuse() -> str:
        raise ToolError("not today")

    @server.tool()
    async def gives_up() -> str:
        raise asyncio.CancelledError()

    @server.tool()
    async def halve(x: float, size: Size, label: str = "x") -> str:
        assert isinstance(x, float) and isinstance(size, Size)
        return f"{label}={x / 2} {size.name}"

    client = client_for(server)
    client.call(1, "refuse")
    assert result_of(client.recv()) == {"content": [{"type": "text", "text": "not today"}], "isError": True}
    client.call(2, "gives_up")
    answer = result_of(client.recv())
    assert answer["isError"] is True and answer["content"][0]["text"] == "CancelledError"
    client.call(3, "halve", {"x": 3, "size": "l"})
    assert text_of(client.recv()) == "x=1.5 L"


def test_invalid_arguments_never_reach_python(client_for) -> None:
    calls = []
    server = Server("t")

    @server.tool()
    def strict(count: int) -> str:
        calls.append(count)
        return "ran"

    client = client_for(server)
    client.call(1, "strict", {"count": "three"})
    answer = result_of(client.recv())
    assert answer["isError"] is True and "/count" in answer["content"][0]["text"]
    assert calls == []


def test_context_progress_logging_and_identity(client_for) -> None:
    server = Server("t")

    @server.tool()
    async def work(ctx: Context) -> str:
        await ctx.progress(1, 2, "half")
        await ctx.progress(2, 2)
        ctx.info({"step": "done"})
        ctx.debug("filtered out at info level")
        return f"{ctx.request_id} {ctx.tool_name} {ctx.client_info['name']} {ctx.protocol_version}"

    client = client_for(server)
    client.call("r1", "work", meta={"progressToken": "p"})
    first, second, log, answer = (client.recv() for _ in range(4))
    assert first["params"] == {"progressToken": "p", "progress": 1, "total": 2, "message": "half"}
    assert second["params"]["progress"] == 2
    assert log["params"] == {"level": "info", "data": {"step": "done"}}
    assert text_of(answer) == "r1 work pytest 2025-11-25"


def test_cancellation_reaches_async_and_sync_handlers(client_for) -> None:
    server = Server("t")
    async_started = threading.Event()
    sync_started = threading.Event()
    async_cancelled = threading.Event()
    sync_saw_cancel = threading.Event()

    @server.tool()
    async def slow_async() -> str:
        async_started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            async_cancelled.set()
            raise
        return "never"

    @server.tool()
    def slow_sync(ctx: Context) -> str:
        sync_started.set()
        for _ in range(300):
            if ctx.is_cancelled:
                sync_saw_cancel.set()
                return "stopped"
            time.sleep(0.01)
        return "never"

    client = client_for(server)
    client.call(1, "slow_async")
    client.call(2, "slow_sync")
    # Cancel calls that are running, not ones the engine may not have started yet.
    assert async_started.wait(5)
    assert sync_started.wait(5)
    for rid in (1, 2):
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
    assert async_cancelled.wait(5)
    assert sync_saw_cancel.wait(5)
    assert client.finish() == []


def test_deadline_cancels_an_async_handler(client_for) -> None:
    server = Server("t")

    @server.tool(timeout=0.1)
    async def stuck() -> str:
        await asyncio.sleep(30)
        return "never"

    client = client_for(server)
    client.call(1, "stuck")
    assert result_of(client.recv()) == {
        "content": [{"type": "text", "text": 'Tool "stuck" timed out after 100 ms'}],
        "isError": True,
    }


def test_sync_handlers_run_concurrently_up_to_their_threads_and_async_ones_too(client_for) -> None:
    # Each call waits until all of its kind have started: they finish only if they run at once.
    server = Server("t", sync_handler_threads=8)
    all_blocking = threading.Barrier(8, timeout=10)

    @server.tool()
    def blocking() -> str:
        all_blocking.wait()
        return "ok"

    started = 0
    all_waiting = asyncio.Event()

    @server.tool()
    async def waiting() -> str:
        nonlocal started
        started += 1
        if started == 64:
            all_waiting.set()
        await asyncio.wait_for(all_waiting.wait(), timeout=10)
        return "ok"

    client = client_for(server)
    for i in range(8):
        client.call(i, "blocking", {})
    for i in range(8, 72):
        client.call(i, "waiting", {})
    answers = [client.recv() for _ in range(72)]
    assert [text_of(a) for a in answers] == ["ok"] * 72, answers


def test_a_negative_count_is_a_value_error() -> None:
    for option in ("max_concurrent_calls", "max_frame_bytes", "page_size", "max_outbound_bytes"):
        with pytest.raises(ValueError, match=f"{option} must be 0 or more, not -1"):
            Server("counts", **{option: -1})
    with pytest.raises(ValueError, match="default_tool_timeout must be 0 or more seconds"):
        Server("counts", default_tool_timeout=-1)


def test_sync_handler_threads_is_checked() -> None:
    for refused in (-1, 0, 1025):
        with pytest.raises(ValueError, match="sync_handler_threads must be between 1 and 1024"):
            Server("threads", sync_handler_threads=refused)


def test_back_channel_requires_declared_capabilities(client_for) -> None:
    server = Server("t")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.elicit({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}})
        except CapabilityError as err:
            return f"refused: {err}"
        return "asked"

    client = client_for(server)
    client.call(1, "ask")
    assert text_of(client.recv()).startswith("refused: the client did not declare the elicitation")


def test_elicitation_round_trip(client_for) -> None:
    server = Server("t")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}
        )
        roots = await ctx.list_roots()
        return f"{answer['content']['n']} {roots[0]['uri']}"

    client = client_for(server, capabilities={"elicitation": {}, "roots": {}})
    client.call(1, "ask")
    request = client.recv()
    assert request["method"] == "elicitation/create"
    client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"n": "Ada"}}})
    request = client.recv()
    assert request["method"] == "roots/list"
    client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"uri": "file:///home"}]}})
    assert text_of(client.recv()) == "Ada file:///home"


def test_registration_errors_and_list_changed(client_for) -> None:
    server = Server("t")

    def f(x: int) -> int:
        return x

    with pytest.raises(RegistrationError):
        server.add_tool(f, name="bad name")
    with pytest.raises(RegistrationError):
        server.add_tool(f, name="f", input_schema={"type": "array"})
    server.add_tool(f)
    with pytest.raises(RegistrationError, match="already registered"):
        server.add_tool(f)
    client = client_for(server)
    client.call(1, "f", {"x": 1})
    assert text_of(client.recv()) == "1"
    server.add_tool(f, name="g")
    assert client.recv() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert server.remove_tool("g") and server.tool_names() == ["f"]


def test_several_servers_in_one_process(client_for) -> None:
    servers = []
    for name in ("one", "two"):
        server = Server(name)

        @server.tool()
        async def who(ctx: Context, _name: str = name) -> str:
            return _name

        servers.append(server)
    clients = [client_for(s) for s in servers]
    for c in clients:
        c.call(1, "who")
    assert [text_of(c.recv()) for c in clients] == ["one", "two"]


async def test_session_inside_a_running_loop_uses_that_loop() -> None:
    server = Server("t")
    loops = []

    @server.tool()
    async def where() -> str:
        loops.append(asyncio.get_running_loop())
        return "here"

    client = Client(server)
    await asyncio.get_running_loop().run_in_executor(None, client.initialize)
    client.call(1, "where")
    answer = await asyncio.get_running_loop().run_in_executor(None, client.recv)
    assert text_of(answer) == "here" and loops == [asyncio.get_running_loop()]


def test_asyncio_run_twice_uses_a_fresh_loop_each_time() -> None:
    server = Server("t")

    @server.tool()
    async def ping() -> str:
        return "pong"

    async def one_round() -> str:
        client = Client(server)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, client.initialize)
        client.call(1, "ping")
        return text_of(await loop.run_in_executor(None, client.recv))

    assert asyncio.run(one_round()) == "pong"
    assert asyncio.run(one_round()) == "pong"


def test_a_session_outlives_the_loop_it_was_created_in() -> None:
    server = Server("t")

    @server.tool()
    async def ping() -> str:
        return "pong"

    async def create() -> Client:
        return Client(server)

    client = asyncio.run(create())  # that loop is closed now
    client.initialize()
    client.call(1, "ping")
    assert text_of(client.recv()) == "pong"


def test_private_loop_serves_async_tools_without_a_running_loop(client_for) -> None:
    server = Server("t")

    @server.tool()
    async def ok() -> str:
        return "ok"

    client = client_for(server)
    client.call(1, "ok")
    assert text_of(client.recv()) == "ok"


def test_many_async_calls_in_a_closed_loop(client_for) -> None:
    """64 calls in flight, each answer followed by a new call: no wake-up of the loop is lost."""
    server = Server("t")

    @server.tool()
    async def tick(n: int) -> str:
        await asyncio.sleep(0)
        return str(n)

    client = client_for(server)
    total, in_flight = 3000, 64
    for n in range(in_flight):
        client.call(n, "tick", {"n": n})
    sent, seen = in_flight, set()
    while len(seen) < total:
        answer = client.recv(5)
        assert text_of(answer) == str(answer["id"])
        seen.add(answer["id"])
        if sent < total:
            client.call(sent, "tick", {"n": sent})
            sent += 1
    assert seen == set(range(total))


def test_returned_dicts_follow_cores_rule(client_for) -> None:
    """A dict with a `content` list of blocks is the whole result; one whose `content` is data
    (a string, numbers, or beside another key) is structured content."""
    server = Server("t")
    returns = {
        "whole": {"content": [{"type": "text", "text": "as is"}], "isError": True, "_meta": {"m": 1}},
        "text_content": {"content": "a string"},
        "number_content": {"content": [1, 2]},
        "beside": {"content": [{"type": "text", "text": "x"}], "other": 1},
    }
    for name, value in returns.items():
        server.add_tool(lambda value=value: value, name=name)

    client = client_for(server)
    client.call(1, "whole")
    assert result_of(client.recv()) == returns["whole"]
    for i, name in enumerate(("text_content", "number_content", "beside"), start=2):
        client.call(i, name)
        result = result_of(client.recv())
        assert result["structuredContent"] == returns[name], name
        assert json.loads(result["content"][0]["text"]) == returns[name]


def test_values_json_has_no_type_for_become_their_text(client_for) -> None:
    """A datetime, Decimal or UUID returned (alone or inside a dict) is its text, as
    `json.dumps(..., default=str)` gives, not an invalid result."""
    import datetime
    import decimal
    import uuid

    when = datetime.datetime(2026, 11, 24, 12, 0, tzinfo=datetime.timezone.utc)
    server = Server("t")
    server.add_tool(lambda: when, name="alone")
    server.add_tool(lambda: {"at": when, "price": decimal.Decimal("1.50"), "id": uuid.UUID(int=1)}, name="inside")

    client = client_for(server)
    client.call(1, "alone")
    assert result_of(client.recv()) == {"content": [{"type": "text", "text": str(when)}]}
    client.call(2, "inside")
    result = result_of(client.recv())
    assert result["structuredContent"] == {"at": str(when), "price": "1.50", "id": str(uuid.UUID(int=1))}


def test_tool_result_meta_reaches_the_wire(client_for) -> None:
    server = Server("t")

    @server.tool()
    def tagged() -> ToolResult:
        return ToolResult([Text("x")], meta={"trace": "abc"})

    client = client_for(server)
    client.call(1, "tagged")
    assert result_of(client.recv()) == {"content": [{"type": "text", "text": "x"}], "_meta": {"trace": "abc"}}


def test_cancellation_vocabulary(client_for) -> None:
    """`ctx.is_cancelled` is the flag, `await ctx.cancelled()` waits for it, and the old
    `if ctx.cancelled:` fails loudly instead of being always true."""
    server = Server("t")
    waiting = threading.Event()
    woke = threading.Event()
    flags: list[bool] = []
    old_use: list[str] = []

    watchers = set()

    @server.tool()
    async def waits(ctx: Context) -> str:
        flags.append(ctx.is_cancelled)
        try:
            bool(ctx.cancelled)
        except TypeError as err:
            old_use.append(str(err))

        async def watch() -> None:
            await ctx.cancelled()
            flags.append(ctx.is_cancelled)
            woke.set()

        # A task of its own: the engine cancels this call's task as well, which could come first.
        watchers.add(asyncio.ensure_future(watch()))
        waiting.set()
        await asyncio.Event().wait()
        return "never sent"

    client = client_for(server)
    client.call(1, "waits")
    assert waiting.wait(5)
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert woke.wait(5)
    assert flags == [False, True]
    assert old_use and "ctx.is_cancelled" in old_use[0]
    assert client.finish() == []


def test_progress_from_sync_and_async_tools_and_wants_progress(client_for) -> None:
    server = Server("t")

    @server.tool()
    def sync_work(ctx: Context) -> str:
        first = ctx.progress(1, 2)  # no await in a sync tool
        again = ctx.progress(1, 2)  # not greater: not sent
        alias = ctx.report_progress(2, 2)
        return f"{ctx.wants_progress} {bool(first)} {bool(again)} {bool(alias)}"

    @server.tool()
    async def async_work(ctx: Context) -> str:
        sent = await ctx.progress(1)
        # The official SDK's spellings are awaited: so are ours.
        alias = await ctx.report_progress(2)
        logged = await ctx.info("working")
        return f"{ctx.wants_progress} {sent} {alias} {logged}"

    client = client_for(server)
    client.call(1, "sync_work", meta={"progressToken": "s"})
    first, second, answer = (client.recv() for _ in range(3))
    assert [first["params"]["progress"], second["params"]["progress"]] == [1, 2]
    assert text_of(answer) == "True True False True"
    client.call(2, "async_work", meta={"progressToken": "a"})
    assert client.recv()["params"] == {"progressToken": "a", "progress": 1}
    assert client.recv()["params"] == {"progressToken": "a", "progress": 2}
    log = client.recv()
    assert log["params"] == {"level": "info", "data": "working"}, log
    assert text_of(client.recv()) == "True True True True"
    client.call(3, "sync_work")
    assert text_of(client.recv()) == "False False False False"


def test_generic_request_to_the_client(client_for) -> None:
    server = Server("t")

    @server.tool()
    async def ping_client(ctx: Context) -> dict:
        return await ctx.request("ping")

    client = client_for(server)
    client.call(1, "ping_client")
    request = client.recv()
    assert request["method"] == "ping"
    client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"pong": True}})
    assert result_of(client.recv())["structuredContent"] == {"pong": True}


def test_an_async_handler_gets_its_answer_while_sync_handlers_hold_every_thread(client_for) -> None:
    # More sync calls than there can be threads for them, each waiting for the async handler to
    # have its answer from the client: were answers handed over on the same threads, none would
    # come and nothing would end.
    server = Server("t")
    answered = threading.Event()

    @server.tool()
    def blocked() -> str:
        assert answered.wait(timeout=20), "the async handler never got its answer"
        return "ok"

    @server.tool()
    async def ping_client(ctx: Context) -> str:
        await ctx.request("ping")
        answered.set()
        return "answered"

    client = client_for(server)
    for i in range(1, 41):
        client.call(i, "blocked")
    client.call(100, "ping_client")
    request = client.recv()
    assert request["method"] == "ping", request
    client.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    answers = {answer["id"]: text_of(answer) for answer in (client.recv() for _ in range(41))}
    assert answers == {**{i: "ok" for i in range(1, 41)}, 100: "answered"}, answers


@pytest.mark.parametrize("kind", ["sample", "elicit", "list_roots", "request"])
def test_a_request_to_the_client_times_out(client_for, kind) -> None:
    """A client that never answers: the given timeout ends the wait with TimeoutError (and the
    client is told the request was abandoned)."""
    server = Server("t")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            if kind == "sample":
                await ctx.sample({"messages": [], "maxTokens": 1}, timeout=0.2)
            elif kind == "elicit":
                await ctx.elicit({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}, timeout=0.2)
            elif kind == "list_roots":
                await ctx.list_roots(timeout=0.2)
            else:
                await ctx.request("ping", timeout=0.2)
        except TimeoutError:
            return "timed out"
        return "answered"

    client = client_for(server, capabilities={"sampling": {}, "elicitation": {}, "roots": {}})
    client.call(1, "ask")
    request = client.recv()
    # The request the client leaves unanswered: each kind sends its own method.
    expected = {
        "sample": "sampling/createMessage",
        "elicit": "elicitation/create",
        "list_roots": "roots/list",
        "request": "ping",
    }[kind]
    assert request["method"] == expected and "id" in request
    messages = [client.recv(), client.recv()]
    cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == request["id"]
    answer = next(m for m in messages if m.get("id") == 1)
    assert text_of(answer) == "timed out"


def test_session_close_ends_at_once(client_for) -> None:
    server = Server("t")
    started = threading.Event()
    cancelled = threading.Event()

    @server.tool()
    async def forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    client = client_for(server)
    client.call(1, "forever")
    assert started.wait(5)
    client.session.close()
    assert cancelled.wait(5)
    assert client.session.recv(5) is None


def test_per_session_call_limit_is_an_option() -> None:
    with pytest.raises(ValueError, match="max_concurrent_calls_per_session must be at least 1"):
        Server("limits", max_concurrent_calls_per_session=0)
    with pytest.raises(ValueError, match="max_concurrent_calls_per_principal must be at least 1"):
        Server("limits", max_concurrent_calls_per_principal=0)
    Server(
        "limits",
        max_concurrent_calls_per_session=2,
        max_concurrent_calls_per_principal=4,
        max_outbound_bytes=64 * 1024,
    )
