"""toolwire._loop.new_event_loop: epoll readiness with microsecond timeouts, and where it is used."""

from __future__ import annotations

import asyncio
import select
import selectors
import socket
import sys
import time

import pytest
import toolwire
from conftest import INITIALIZE, Client, serve_script
from toolwire._loop import PreciseEpollSelector, new_event_loop

pytestmark = pytest.mark.skipif(not hasattr(selectors, "EpollSelector"), reason="epoll is Linux-only")


@pytest.fixture
def selector_and_pair():
    selector = PreciseEpollSelector()
    left, right = socket.socketpair()
    selector.register(right, selectors.EVENT_READ, "right")
    yield selector, left, right
    selector.close()
    left.close()
    right.close()


def test_a_ready_descriptor_ends_a_long_wait(selector_and_pair) -> None:
    selector, left, _ = selector_and_pair
    left.send(b"x")
    started = time.monotonic()
    events = selector.select(timeout=30)
    assert time.monotonic() - started < 10, "waited out the timeout with a descriptor ready"
    assert [(key.data, mask) for key, mask in events] == [("right", selectors.EVENT_READ)]


def test_a_wait_with_nothing_ready_waits_its_timeout_and_comes_back_empty(selector_and_pair) -> None:
    selector, _, _ = selector_and_pair
    # Returning early would make the event loop spin instead of sleeping.
    started = time.monotonic()
    assert selector.select(timeout=0.002) == []
    assert time.monotonic() - started >= 0.0018
    assert selector.select(timeout=0) == []


def test_readiness_is_kept_when_select_refuses_the_descriptor(selector_and_pair, monkeypatch) -> None:
    selector, left, _ = selector_and_pair

    def beyond_fd_setsize(*_args: object) -> None:
        raise ValueError("filedescriptor out of range in select()")

    monkeypatch.setattr(select, "select", beyond_fd_setsize)
    assert selector.select(timeout=0.002) == []
    left.send(b"x")
    assert [key.data for key, _ in selector.select(timeout=30)] == ["right"]


def test_new_event_loop_runs_timers_and_streams_on_the_precise_selector() -> None:
    loop = new_event_loop()
    try:
        assert isinstance(loop._selector, PreciseEpollSelector)  # type: ignore[attr-defined]

        async def main() -> bytes:
            await asyncio.sleep(0.0003)
            left, right = socket.socketpair()
            reader, writer = await asyncio.open_connection(sock=left)
            right.sendall(b"ping\n")
            line = await reader.readline()
            writer.close()
            right.close()
            return line

        assert loop.run_until_complete(main()) == b"ping\n"
    finally:
        loop.close()


def test_an_application_event_loop_policy_is_respected() -> None:
    class OwnLoop(asyncio.SelectorEventLoop):
        pass

    class OwnPolicy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            return OwnLoop()

    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(OwnPolicy())
    try:
        loop = new_event_loop()
        assert type(loop) is OwnLoop
        loop.close()
    finally:
        asyncio.set_event_loop_policy(previous)


def test_new_event_loop_is_plumbing_not_exported_from_the_package() -> None:
    assert "new_event_loop" not in toolwire.__all__
    assert not hasattr(toolwire, "new_event_loop")


def test_async_tools_outside_a_loop_run_on_the_precise_selector() -> None:
    server = toolwire.Server("t")

    @server.tool()
    async def selector_name() -> str:
        await asyncio.sleep(0.0002)
        return type(asyncio.get_running_loop()._selector).__name__  # type: ignore[attr-defined]

    client = Client(server)  # no running loop here: the server's private loop runs the tool
    client.initialize()
    client.call(1, "selector_name")
    assert client.recv()["result"]["content"][0]["text"] == "PreciseEpollSelector"


def test_run_serves_stdio_on_the_precise_selector(tmp_path) -> None:
    script = tmp_path / "which_loop.py"
    script.write_text(
        "import asyncio\n"
        "from toolwire import Server\n"
        "server = Server('w')\n"
        "@server.tool()\n"
        "async def selector_name() -> str:\n"
        "    await asyncio.sleep(0.0002)\n"
        "    return type(asyncio.get_running_loop()._selector).__name__\n"
        "server.run()\n"
    )
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "selector_name", "arguments": {}}},
    ]
    done, answers = serve_script(script, messages)
    assert done.returncode == 0, done.stderr.decode()
    call = next(a for a in answers if a.get("id") == 1)
    expected = "PreciseEpollSelector" if sys.version_info >= (3, 11) else "EpollSelector"
    assert call["result"]["content"][0]["text"] == expected
