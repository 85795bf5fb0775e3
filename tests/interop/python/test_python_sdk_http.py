"""The official MCP Python SDK client (PyPI `mcp`) against a toolwire demo server over
Streamable HTTP.

The server is started as `examples/run-demo LANG --http 0` (LANG from TOOLWIRE_DEMO_LANG,
default rust); its stderr is watched (`LogWatch`) for the URL and for what the server did.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from logwatch import LogWatch
from mcp import Client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[3]
RUN_DEMO = ROOT / "examples" / "run-demo"
LANG = os.environ.get("TOOLWIRE_DEMO_LANG", "rust")


class DemoServer:
    def __init__(self, url: str, log: LogWatch) -> None:
        self.url = url
        self.log = log


def start(*flags: str) -> Iterator[DemoServer]:
    process = subprocess.Popen(
        [str(RUN_DEMO), LANG, "--http", "0", *flags],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TOOLWIRE_LOG": "toolwire=debug"},
    )
    assert process.stderr
    stderr = process.stderr
    log = LogWatch(lambda: stderr)
    try:
        # The first start may build the demo (up to minutes); the wait ends at once if it exits.
        match = log.wait_for(r"listening on (http://\S+)\s", 120)  # a whole line, not half of one
        if match is None:
            raise RuntimeError(f"the demo did not start:\n{log.text()}")
        yield DemoServer(match.group(1), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    yield from start()


@pytest.fixture(scope="module")
def stateless() -> Iterator[DemoServer]:
    yield from start("--stateless")


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_handshake_and_tool_list(server: DemoServer, mode: str) -> None:
    async def go():
        async with Client(server.url, mode=mode) as client:
            # "auto" probes server/discover and speaks 2026-07-28; "legacy" goes through initialize.
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            assert client.server_info is not None and client.server_info.name == "toolwire-demo"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"echo", "add", "sleep", "fail"}
            assert tools["add"].output_schema["required"] == ["sum"]

    run(go())


def test_calls_and_errors(server: DemoServer) -> None:
    async def go():
        async with Client(server.url) as client:
            echo = await client.call_tool("echo", {"text": "héllo\nworld"})
            assert echo.content[0].text == "héllo\nworld"
            add = await client.call_tool("add", {"a": 1.5, "b": 2.25})
            assert add.structured_content == {"sum": 3.75}
            failed = await client.call_tool("fail", {"message": "it broke"})
            assert failed.is_error and failed.content[0].text == "it broke"
            with pytest.raises(MCPError) as err:
                await client.call_tool("nope", {})
            assert err.value.code == -32602

    run(go())


def test_progress_arrives_on_the_call_stream(server: DemoServer) -> None:
    async def go():
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        async with Client(server.url) as client:
            result = await client.call_tool("sleep", {"ms": 450}, progress_callback=on_progress)
            assert result.content[0].text == "slept 450 ms"
        assert len(seen) >= 3 and seen == sorted(seen), seen

    run(go())


def test_cancel_a_sleep(server: DemoServer) -> None:
    async def go():
        async with Client(server.url) as client:
            with anyio.move_on_after(0.3) as scope:
                await client.call_tool("sleep", {"ms": 20000})
            assert scope.cancelled_caught
            assert (await client.call_tool("echo", {"text": "still here"})).content[0].text == "still here"
            seen = await anyio.to_thread.run_sync(server.log.wait_for, "call cancelled by the client", 10)
            assert seen, server.log.text()

    run(go())


def test_concurrent_sessions_see_only_their_own_answers(server: DemoServer) -> None:
    async def session(n: int) -> None:
        async with Client(server.url) as client:
            for i in range(20):
                text = f"client {n} call {i}"
                assert (await client.call_tool("echo", {"text": text})).content[0].text == text

    async def go():
        async with anyio.create_task_group() as group:
            for n in range(8):
                group.start_soon(session, n)

    run(go())


def test_stateless_server(stateless: DemoServer) -> None:
    async def go():
        async with Client(stateless.url, mode="legacy") as client:
            assert (await client.call_tool("echo", {"text": "alone"})).content[0].text == "alone"
            add = await client.call_tool("add", {"a": 2, "b": 3})
            assert add.structured_content == {"sum": 5}

    run(go())
