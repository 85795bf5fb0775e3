"""`server.asgi_app()` inside a FastAPI app that serves its own routes too, run by uvicorn, and
driven by the official MCP Python SDK client in both protocol eras: the app's routes and the MCP
endpoint side by side, the server's lifespan entered through the app's, the Host guard safe by
default, and a 2026-07-28 client hanging up cancelling its call."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
import uvicorn
from conftest import asgi_post
from fastapi import FastAPI
from mcp import Client
from toolwire import Context, Server

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def weather_server(events: dict[str, asyncio.Event]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events["lifespan_entered"].set()
        try:
            yield {"station": "Blindern"}
        finally:
            events["lifespan_exited"].set()

    server = Server("weather", "1.0", lifespan=lifespan)

    @server.tool()
    async def forecast(city: str, ctx: Context) -> str:
        """Forecast for a city."""
        await ctx.report_progress(1, 2, "fetching")
        return f"{city}: sunny (station {ctx.lifespan_context['station']})"

    @server.tool()
    async def wait_for_release(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "waiting")
        events["waiting"].set()
        try:
            await events["release"].wait()
        except asyncio.CancelledError:
            events["cancelled"].set()
            raise
        return "released"

    @server.tool()
    async def wait_forever(ctx: Context, report: bool = False) -> str:
        if report:
            await ctx.report_progress(1, None, "started")  # the answer becomes a stream
        events["waiting"].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events["cancelled"].set()
            raise
        return "never"

    return server


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """`app` under uvicorn on a socket bound here (so its port is known before serving)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    started = asyncio.Event()

    async def watched(scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def send_and_watch(message: dict[str, Any]) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete":
                started.set()

        await app(scope, receive, send_and_watch if scope["type"] == "lifespan" else send)

    server = uvicorn.Server(uvicorn.Config(watched, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    starting = asyncio.create_task(started.wait())
    await asyncio.wait([serving, starting], return_when=asyncio.FIRST_COMPLETED)
    assert started.is_set(), "uvicorn started the app"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        sock.close()


def fastapi_app(server: Server) -> FastAPI:
    mcp_app = server.asgi_app()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Starlette does not pass lifespan events to what it mounts: the app's lifespan holds it.
        async with mcp_app:
            yield

    app = FastAPI(lifespan=lifespan)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    app.add_route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"])
    app.mount("/v2", mcp_app)
    return app


def new_events() -> dict[str, asyncio.Event]:
    names = ("lifespan_entered", "lifespan_exited", "waiting", "cancelled", "release")
    return {name: asyncio.Event() for name in names}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_client_talks_to_the_mounted_endpoint(mode: str) -> None:
    events = new_events()
    app = fastapi_app(weather_server(events))
    async with served(app) as base:
        assert events["lifespan_entered"].is_set(), "the app's lifespan entered the server's"
        async with httpx2.AsyncClient() as http:
            health = await http.get(f"{base}/health")
            assert health.json() == {"status": "ok"}
        for url in (f"{base}/mcp", f"{base}/v2/"):
            async with Client(url, mode=mode) as client:
                assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"forecast", "wait_for_release", "wait_forever"}
                progress: list[float] = []

                async def on_progress(value: float, total: float | None, message: str | None, seen=progress) -> None:
                    seen.append(value)

                result = await client.call_tool("forecast", {"city": "Oslo"}, progress_callback=on_progress)
                assert result.content[0].text == "Oslo: sunny (station Blindern)"
                assert progress == [1]
    assert events["lifespan_exited"].is_set(), "the app's shutdown exited the server's lifespan"


async def test_the_host_guard_is_loopback_only_unless_told() -> None:
    server = weather_server(new_events())
    initialize = INITIALIZE
    headers = {"accept": "application/json, text/event-stream", "host": "mcp.example.com"}
    async with served(server.asgi_app()) as base, httpx2.AsyncClient() as http:
        refused = await http.post(f"{base}/mcp", json=initialize, headers=headers)
        assert refused.status_code == 403
    async with served(server.asgi_app(allowed_hosts=["mcp.example.com"])) as base, httpx2.AsyncClient() as http:
        accepted = await http.post(f"{base}/mcp", json=initialize, headers=headers)
        assert accepted.status_code == 200
        assert accepted.json()["result"]["serverInfo"]["name"] == "weather"


async def test_a_whole_body_and_a_streamed_one_are_answered_alike() -> None:
    """A body in one ASGI message is answered in one step (its answer whole, with its length);
    one that comes in pieces (chunked) is fed to the engine as it comes."""
    server = weather_server(new_events())
    initialize = INITIALIZE
    body = json.dumps(initialize).encode()
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    async def pieces() -> AsyncIterator[bytes]:
        for at in range(0, len(body), 7):
            yield body[at : at + 7]

    async with served(server.asgi_app()) as base, httpx2.AsyncClient() as http:
        whole = await http.post(f"{base}/mcp", content=body, headers=headers)
        assert whole.status_code == 200
        assert whole.headers["content-length"] == str(len(whole.content))
        assert whole.json()["result"]["serverInfo"]["name"] == "weather"
        streamed = await http.post(f"{base}/mcp", content=pieces(), headers=headers)
        assert streamed.status_code == 200
        assert streamed.json()["result"]["serverInfo"]["name"] == "weather"
        assert streamed.headers["mcp-session-id"] != whole.headers["mcp-session-id"]


async def test_an_async_tool_that_needs_no_wait_is_answered_with_its_request() -> None:
    """Started on the app's loop as the request is answered: one that returns (or raises)
    without waiting is answered in one piece (JSON, its length said); one that waits streams,
    its task going on from where it stopped."""
    server = Server("eager", "1.0")

    @server.tool()
    async def now(text: str) -> str:
        return f"now: {text}"

    @server.tool()
    async def refuse() -> str:
        raise ValueError("no, at once")

    @server.tool()
    async def later(text: str) -> str:
        for _ in range(3):
            await asyncio.sleep(0)
        return f"later: {text}"

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with served(server.asgi_app()) as base, httpx2.AsyncClient() as http:
        opened = await http.post(f"{base}/mcp", json=INITIALIZE, headers=headers)
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}

        async def call(id: int, name: str, arguments: dict[str, Any]) -> httpx2.Response:
            params = {"name": name, "arguments": arguments}
            message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
            return await http.post(f"{base}/mcp", json=message, headers=session)

        answered = await call(2, "now", {"text": "hi"})
        assert answered.headers["content-type"] == "application/json"
        assert answered.headers["content-length"] == str(len(answered.content))
        assert answered.json()["result"]["content"][0]["text"] == "now: hi"
        refused = await call(3, "refuse", {})
        assert refused.headers["content-type"] == "application/json"
        assert refused.json()["result"]["isError"] is True
        assert refused.json()["result"]["content"][0]["text"] == "no, at once"
        streamed = await call(4, "later", {"text": "hi"})
        assert streamed.headers["content-type"] == "text/event-stream"
        lines = streamed.text.splitlines()
        events = [json.loads(line[6:]) for line in lines if line.startswith("data: ") and len(line) > 6]
        assert events[-1]["result"]["content"][0]["text"] == "later: hi"


async def test_a_streamed_answer_ends_once_whatever_was_ready() -> None:
    """A plain `def` tool's answer streams (its call runs on a worker thread): the head once,
    the body's messages, and exactly one last message (`more_body` false) at the end, whether
    the answer was there with the head or came later; nothing is sent after it."""
    server = Server("streamed", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    app = server.asgi_app()
    async with app:
        opened = await asgi_post(app, INITIALIZE)
        head = dict(opened[0]["headers"])
        session = [
            (b"mcp-session-id", head[b"mcp-session-id"]),
            (b"mcp-protocol-version", b"2025-11-25"),
        ]
        for call_id in range(2, 22):
            call = {
                "jsonrpc": "2.0",
                "id": call_id,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": f"hi {call_id}"}},
            }
            sent = await asgi_post(app, call, session)
            assert [m["type"] for m in sent[:1]] == ["http.response.start"], sent
            assert dict(sent[0]["headers"])[b"content-type"] == b"text/event-stream"
            bodies = sent[1:]
            assert bodies and all(m["type"] == "http.response.body" for m in bodies), sent
            assert [m.get("more_body", False) for m in bodies] == [True] * (len(bodies) - 1) + [False], sent
            events = b"".join(m["body"] for m in bodies).decode()
            data = [json.loads(line[6:]) for line in events.splitlines() if line.startswith("data: ") and len(line) > 6]
            assert data[-1]["id"] == call_id and data[-1]["result"]["content"][0]["text"] == f"hi {call_id}", events


async def test_a_tool_not_run_in_a_thread_is_answered_on_the_apps_loop_with_its_request() -> None:
    """`run_in_thread=False`: the plain `def` runs on the loop's thread as the request is
    answered, in one piece; the default runs on a worker thread."""
    server = Server("in-place", "1.0")
    threads: dict[str, int] = {}

    @server.tool(run_in_thread=False)
    def here(text: str) -> str:
        threads["here"] = threading.get_ident()
        return f"here: {text}"

    @server.tool()
    def threaded(text: str) -> str:
        threads["threaded"] = threading.get_ident()
        return f"threaded: {text}"

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with served(server.asgi_app()) as base, httpx2.AsyncClient() as http:
        opened = await http.post(f"{base}/mcp", json=INITIALIZE, headers=headers)
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}

        async def call(id: int, name: str) -> httpx2.Response:
            params = {"name": name, "arguments": {"text": "hi"}}
            message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
            return await http.post(f"{base}/mcp", json=message, headers=session)

        answered = await call(2, "here")
        assert answered.headers["content-type"] == "application/json"
        assert answered.headers["content-length"] == str(len(answered.content))
        assert answered.json()["result"]["content"][0]["text"] == "here: hi"
        threaded = await call(3, "threaded")
        text = threaded.text
        assert "threaded: hi" in text
    assert threads["here"] == threading.get_ident()
    assert threads["threaded"] != threading.get_ident()


async def test_a_body_that_stops_short_of_its_length_is_answered_408() -> None:
    """Waited for whole first, then handed to the engine, whose body timeout counts that wait."""
    server = weather_server(new_events())
    async with served(server.asgi_app(body_read_timeout=0.001)) as base:
        port = int(base.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
            b'{"jsonrpc"'
        )
        await writer.drain()
        status = await reader.readline()
        assert status.startswith(b"HTTP/1.1 408"), status
        writer.close()


@pytest.mark.parametrize("streaming", [True, False], ids=["mid-stream", "before-the-head"])
async def test_a_modern_client_hanging_up_cancels_its_call(streaming: bool) -> None:
    events = new_events()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "wait_forever",
            "arguments": {"report": streaming},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "progressToken": "p",
            },
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "wait_forever",
    }
    async with served(weather_server(events).asgi_app()) as base, httpx2.AsyncClient() as http:
        request = http.build_request("POST", f"{base}/mcp", json=call, headers=headers)
        sending = asyncio.create_task(http.send(request, stream=True))
        await events["waiting"].wait()
        if streaming:
            response = await sending
            assert response.status_code == 200
            await response.aclose()  # mid-stream: the client hangs up
        else:
            sending.cancel()  # no head yet: the client gives up waiting and hangs up
            with contextlib.suppress(asyncio.CancelledError):
                await sending
        await asyncio.wait_for(events["cancelled"].wait(), 10)


async def test_a_legacy_client_hanging_up_mid_stream_can_resume_it() -> None:
    # 2025-11-25: a disconnect is not a cancel (the spec's SHOULD NOT); the stream is resumed
    # with Last-Event-ID and carries the answer.
    events = new_events()
    headers = {"accept": "application/json, text/event-stream"}
    initialize = INITIALIZE
    async with served(weather_server(events).asgi_app()) as base, httpx2.AsyncClient() as http:
        opened = await http.post(f"{base}/mcp", json=initialize, headers=headers)
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "wait_for_release", "arguments": {}, "_meta": {"progressToken": "p"}},
        }
        last_id = None
        async with http.stream("POST", f"{base}/mcp", json=call, headers=session) as response:
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    last_id = line[3:].strip()
                if "notifications/progress" in line:
                    break  # hang up mid-stream, the call still running
        assert last_id is not None and events["waiting"].is_set()
        events["release"].set()
        resumed = {**session, "accept": "text/event-stream", "last-event-id": last_id}
        async with http.stream("GET", f"{base}/mcp", headers=resumed) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data:") and '"id":2' in line:
                    assert '"released"' in line
                    break
        assert not events["cancelled"].is_set()
