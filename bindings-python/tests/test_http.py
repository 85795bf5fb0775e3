"""Streamable HTTP from Python: `serve_http` on the running loop, driven by the official MCP
Python SDK client and by plain HTTP requests (urllib, in a thread)."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from typing import Any, Optional

import pytest
from mcp import Client
from toolwire import Context, Server

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class Reply:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status_code = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def json(self) -> Any:
        """The JSON body, or the last message of an SSE body."""
        if self.headers.get("content-type") == "text/event-stream":
            data = [line[6:] for line in self.body.decode().splitlines() if line.startswith("data: ")]
            return json.loads([d for d in data if d][-1])
        return json.loads(self.body)


async def fetch(url: str, method: str = "GET", body: Any = None, headers: Optional[dict[str, str]] = None) -> Reply:
    def go() -> Reply:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return Reply(response.status, response.headers, response.read())
        except urllib.error.HTTPError as err:
            return Reply(err.code, err.headers, err.read())

    return await asyncio.to_thread(go)


def http_server() -> Server:
    server = Server("http-test")

    @server.tool()
    async def slow_echo(ctx: Context, text: str) -> str:
        await ctx.progress(1, 2)
        await asyncio.sleep(0.02)
        return text

    @server.tool()
    def shout(text: str) -> str:
        return text.upper()

    @server.resource("memo://a", name="a")
    async def memo() -> str:
        return "from a coroutine"

    @server.prompt()
    def hello(name: str) -> str:
        return f"hello {name}"

    return server


@pytest.mark.asyncio
async def test_sdk_client_over_http_with_async_handlers() -> None:
    server = http_server()
    http = await server.serve_http("127.0.0.1", 0)
    try:
        assert http.url.startswith("http://127.0.0.1:") and http.url.endswith("/mcp")
        seen: list[float] = []

        async def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
            seen.append(progress)

        async with Client(http.url, mode="legacy") as client:
            result = await client.call_tool("slow_echo", {"text": "hi"}, progress_callback=on_progress)
            assert result.content[0].text == "hi" and seen == [1]
            assert (await client.call_tool("shout", {"text": "hi"})).content[0].text == "HI"
            read = await client.read_resource("memo://a")
            assert read.contents[0].text == "from a coroutine"
            prompt = await client.get_prompt("hello", {"name": "ada"})
            assert prompt.messages[0].content.text == "hello ada"
    finally:
        http.stop()
        await http.wait()


@pytest.mark.asyncio
async def test_token_validator_and_stateless_mode() -> None:
    def validate(token: str) -> Optional[dict[str, Any]]:
        if token == "good":
            return {"subject": "ada", "scopes": ["mcp"]}
        if token == "narrow":
            return {"insufficientScope": "mcp"}
        return None

    server = http_server()
    http = await server.serve_http(
        "127.0.0.1", 0, stateless=True, token_validator=validate, authorization_servers=["https://auth.example"]
    )
    try:
        missing = await fetch(http.url, "POST", INIT, HEADERS)
        assert missing.status_code == 401
        assert "resource_metadata=" in missing.headers["www-authenticate"]
        narrow = await fetch(http.url, "POST", INIT, {**HEADERS, "authorization": "Bearer narrow"})
        assert narrow.status_code == 403
        bad = await fetch(http.url, "POST", INIT, {**HEADERS, "authorization": "Bearer bad"})
        assert bad.status_code == 401
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "shout", "arguments": {"text": "x"}},
        }
        ok = await fetch(http.url, "POST", call, {**HEADERS, "authorization": "Bearer good"})
        assert ok.status_code == 200 and "mcp-session-id" not in ok.headers
        assert ok.json()["result"]["content"][0]["text"] == "X"
        metadata = await fetch(http.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))
        assert metadata.json()["authorization_servers"] == ["https://auth.example"]
        assert (await fetch(http.url, headers={"authorization": "Bearer good"})).status_code == 405
    finally:
        http.stop()
        await http.wait()


async def test_token_checks_are_not_queued_behind_sync_handlers() -> None:
    # Every handler thread (40: this server raises the process's limit to it) is held by a sync
    # handler; a new request must still be authenticated and answered (by an async handler).
    server = Server("auth-threads", sync_handler_threads=40)
    started = threading.Semaphore(0)
    release = threading.Event()

    @server.tool()
    def blocked() -> str:
        started.release()
        assert release.wait(timeout=30)
        return "released"

    @server.tool()
    async def quick() -> str:
        return "quick"

    http = await server.serve_http(
        "127.0.0.1", 0, stateless=True, token_validator=lambda t: {"subject": "ada"} if t == "good" else None
    )
    headers = {**HEADERS, "authorization": "Bearer good"}

    def call(name: str, id_: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": {}}}

    answers: list[str] = []

    def blocked_call(id_: int) -> None:
        request = urllib.request.Request(http.url, json.dumps(call("blocked", id_)).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            answers.append(Reply(response.status, response.headers, response.read()).json())

    callers = [threading.Thread(target=blocked_call, args=(i,)) for i in range(1, 41)]
    try:
        for caller in callers:
            caller.start()
        for _ in range(40):
            assert await asyncio.to_thread(started.acquire, timeout=20), "a blocked call did not start"
        reply = await fetch(http.url, "POST", call("quick", 100), headers)
        assert reply.status_code == 200, reply.body
        assert reply.json()["result"]["content"][0]["text"] == "quick"
    finally:
        release.set()
        for caller in callers:
            await asyncio.to_thread(caller.join)
        http.stop()
        await http.wait()
    assert [a["result"]["content"][0]["text"] for a in answers] == ["released"] * 40


@pytest.mark.asyncio
async def test_a_port_in_use_is_reported() -> None:
    server = http_server()
    http = await server.serve_http("127.0.0.1", 0)
    try:
        port = int(http.url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(Exception, match="(?i)address|in use"):
            await server.serve_http("127.0.0.1", port)
    finally:
        http.stop()
        await http.wait()


@pytest.mark.asyncio
async def test_server_stop_ends_every_http_server_it_started() -> None:
    server = http_server()
    one = await server.serve_http("127.0.0.1", 0)
    two = await server.serve_http("127.0.0.1", 0, stateless=True)
    # A handle's own stop ends just that one.
    one.stop()
    await asyncio.wait_for(one.wait(), 10)
    assert (await fetch(two.url, "POST", INIT, HEADERS)).status_code == 200
    three = await server.serve_http("127.0.0.1", 0)
    server.stop()
    await asyncio.wait_for(asyncio.gather(two.wait(), three.wait()), 10)
    # The server serves again after a stop.
    again = await server.serve_http("127.0.0.1", 0)
    try:
        assert (await fetch(again.url, "POST", INIT, HEADERS)).status_code == 200
    finally:
        again.stop()
        await again.wait()


@pytest.mark.asyncio
async def test_response_modes() -> None:
    server = http_server()
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout", "arguments": {"text": "hi"}}}
    stateless = {"stateless": True}
    # Auto answers in JSON only when the answer is ready as the request is read; a sync tool
    # runs on a worker thread, so either is right there.
    for options, content_types in [
        ({}, {"application/json", "text/event-stream"}),
        ({"json_response": True}, {"application/json"}),
        ({"response_mode": "json"}, {"application/json"}),
        ({"response_mode": "sse"}, {"text/event-stream"}),
    ]:
        http = await server.serve_http("127.0.0.1", 0, **stateless, **options)
        try:
            reply = await fetch(http.url, "POST", call, HEADERS)
            assert reply.status_code == 200, options
            assert reply.headers["content-type"] in content_types, options
            assert reply.json()["result"]["content"] == [{"type": "text", "text": "HI"}]
        finally:
            http.stop()
            await http.wait()
    with pytest.raises(ValueError, match="response mode"):
        await server.serve_http("127.0.0.1", 0, response_mode="stream")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='JSON answers asked for beside the "sse"'):
        await server.serve_http("127.0.0.1", 0, response_mode="sse", json_response=True)


@pytest.mark.asyncio
async def test_slow_clients_are_cut_off_and_connections_are_capped() -> None:
    import socket

    server = http_server()

    def port_of(url: str) -> int:
        return int(url.rsplit(":", 1)[1].split("/")[0])

    def trickle_then_wait_for_close(port: int) -> bytes:
        # Half a head, then nothing: the server closes the connection at the limit.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            return sock.recv(4096)

    def second_connection_while_one_is_open(port: int) -> bytes:
        body = json.dumps(INIT).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as held:
            # Served and kept alive: the one connection allowed is taken.
            held.sendall(head + body)
            assert held.recv(4096).startswith(b"HTTP/1.1 200")
            with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
                reply = b""
                while chunk := extra.recv(4096):
                    reply += chunk
                return reply

    slow = await server.serve_http("127.0.0.1", 0, header_read_timeout=0.2)
    try:
        assert await asyncio.to_thread(trickle_then_wait_for_close, port_of(slow.url)) == b""
    finally:
        slow.stop()
        await slow.wait()
    capped = await server.serve_http("127.0.0.1", 0, max_connections=1)
    try:
        refused = await asyncio.to_thread(second_connection_while_one_is_open, port_of(capped.url))
        assert refused.startswith(b"HTTP/1.1 503"), refused
        assert b"too many open connections" in refused
    finally:
        capped.stop()
        await capped.wait()
    with pytest.raises(ValueError, match="max_connections"):
        await server.serve_http("127.0.0.1", 0, max_connections=0)
    with pytest.raises(ValueError, match="header_read_timeout"):
        await server.serve_http("127.0.0.1", 0, header_read_timeout=-1)
    with pytest.raises(ValueError, match="max_sessions must be 0 or more, not -5"):
        await server.serve_http("127.0.0.1", 0, max_sessions=-5)


@pytest.mark.asyncio
async def test_one_client_holds_at_most_max_sessions_per_client() -> None:
    server = http_server()
    http = await server.serve_http("127.0.0.1", 0, max_sessions_per_client=1)
    try:
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

        async def ping_status(session: str) -> int:
            headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            return (await fetch(http.url, "POST", ping, headers)).status_code

        first = (await fetch(http.url, "POST", INIT, HEADERS)).headers["mcp-session-id"]
        assert await ping_status(first) == 200
        # The same client (address) opens another: its idle first session makes room.
        second = (await fetch(http.url, "POST", INIT, HEADERS)).headers["mcp-session-id"]
        assert await ping_status(first) == 404
        assert await ping_status(second) == 200
    finally:
        http.stop()
        await http.wait()
    with pytest.raises(ValueError, match="max_sessions_per_client"):
        await server.serve_http("127.0.0.1", 0, max_sessions_per_client=0)
    # The slow-reader bound reaches the engine (which checks it); its behaviour is core's test.
    with pytest.raises(ValueError, match="max_sse_buffered_bytes"):
        await server.serve_http("127.0.0.1", 0, max_sse_buffered_bytes=0)
