"""The official MCP Python SDK client (PyPI `mcp`) against a toolwire demo server over
Streamable HTTP.

The server is started as `examples/run-demo LANG --http 0` (LANG from TOOLWIRE_DEMO_LANG,
default rust); the URL is read from its stderr, which goes to a log file.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[3]
RUN_DEMO = ROOT / "examples" / "run-demo"
LANG = os.environ.get("TOOLWIRE_DEMO_LANG", "rust")


class DemoServer:
    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log


def start(*flags: str) -> Iterator[DemoServer]:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with log.open("w") as sink:
            process = subprocess.Popen(
                [str(RUN_DEMO), LANG, "--http", "0", *flags],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=sink,
                env={**os.environ, "TOOLWIRE_LOG": "toolwire=debug"},
            )
        try:
            deadline = time.monotonic() + 120
            url = None
            while url is None:
                match = re.search(r"listening on (http://\S+)", log.read_text())
                if match:
                    url = match.group(1)
                elif process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the demo did not start:\n{log.read_text()}")
                else:
                    time.sleep(0.05)
            yield DemoServer(url, log)
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
            assert client.protocol_version == "2025-11-25"
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
            for _ in range(50):
                if "call cancelled by the client" in server.log.read_text():
                    break
                await anyio.sleep(0.05)
            assert "call cancelled by the client" in server.log.read_text()

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
