"""The official MCP Python SDK client (PyPI `mcp`) against a toolwire demo server over stdio.

The server is started through `examples/run-demo LANG` (LANG from TOOLWIRE_DEMO_LANG, default
rust). Its stderr (debug logs) goes through a FIFO to a `LogWatch`, so a test can wait until the
server says what it did.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from logwatch import LogWatch
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[3]
RUN_DEMO = ROOT / "examples" / "run-demo"
LANG = os.environ.get("TOOLWIRE_DEMO_LANG", "rust")


def demo(log: ServerLog) -> StdioServerParameters:
    return StdioServerParameters(
        command="bash",
        args=["-c", f'exec "{RUN_DEMO}" {LANG} 2>"{log.path}"'],
        env={**os.environ, "TOOLWIRE_LOG": "toolwire=debug"},
    )


class ServerLog:
    """Where the server's stderr goes (`path`, a FIFO) and the watch that reads it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.watch = LogWatch(lambda: open(path, "rb"))


@pytest.fixture
def log() -> Iterator[ServerLog]:
    with tempfile.TemporaryDirectory() as tmp:
        yield ServerLog(Path(tmp) / "server.log")


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_handshake_and_tool_list(log: ServerLog, mode: str) -> None:
    async def go():
        async with Client(demo(log), mode=mode) as client:
            # "auto" probes server/discover and speaks 2026-07-28; "legacy" goes through initialize.
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            assert client.server_info is not None and client.server_info.name == "toolwire-demo"
            assert client.instructions
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"echo", "add", "sleep", "fail"}
            assert tools["add"].output_schema["required"] == ["sum"]
            assert tools["sleep"].input_schema["properties"]["ms"]["maximum"] == 60000

    run(go())


def test_echo_and_add(log: ServerLog) -> None:
    async def go():
        async with Client(demo(log)) as client:
            echo = await client.call_tool("echo", {"text": "héllo\nworld"})
            assert not echo.is_error
            assert echo.content[0].text == "héllo\nworld"
            add = await client.call_tool("add", {"a": 1.5, "b": 2.25})
            assert add.structured_content == {"sum": 3.75}
            assert add.content[0].text == '{"sum":3.75}'

    run(go())


def test_progress_is_received(log: ServerLog) -> None:
    async def go():
        seen: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

        async with Client(demo(log)) as client:
            result = await client.call_tool("sleep", {"ms": 450}, progress_callback=on_progress)
            assert result.content[0].text == "slept 450 ms"
        assert len(seen) >= 3, seen
        values = [p for p, _ in seen]
        assert values == sorted(values) and len(set(values)) == len(values)
        assert all(total == 450 for _, total in seen)

    run(go())


def test_fail_is_an_error_result(log: ServerLog) -> None:
    async def go():
        async with Client(demo(log)) as client:
            result = await client.call_tool("fail", {"message": "it broke"})
            assert result.is_error
            assert result.content[0].text == "it broke"
            bad = await client.call_tool("add", {"a": "one", "b": 2})
            assert bad.is_error
            assert bad.content[0].text.startswith('Invalid arguments for tool "add"')

    run(go())


def test_unknown_tool_is_a_protocol_error(log: ServerLog) -> None:
    async def go():
        async with Client(demo(log)) as client:
            with pytest.raises(MCPError) as err:
                await client.call_tool("nope", {})
            assert err.value.code == -32602

    run(go())


def test_cancel_a_sleep(log: ServerLog) -> None:
    async def go():
        async with Client(demo(log)) as client:
            with anyio.move_on_after(0.3) as scope:
                await client.call_tool("sleep", {"ms": 20000})
            assert scope.cancelled_caught
            # The server keeps serving, and it really stopped the call.
            assert (await client.call_tool("echo", {"text": "still here"})).content[0].text == "still here"
            seen = await anyio.to_thread.run_sync(log.watch.wait_for, "call cancelled by the client", 10)
            assert seen, log.watch.text()

    run(go())
