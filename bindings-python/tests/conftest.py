from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))


# An initialize request as a client writes it on a server's stdin (see `line`).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


async def asgi_post(app: Any, message: dict, headers: Iterable[tuple[bytes, bytes]] = ()) -> list[dict]:
    """`message` POSTed as JSON to the ASGI `app` called directly (no ASGI server), with
    `headers` besides the JSON ones: the messages it sent back. The body comes in one message;
    then `receive` waits as an open connection's would (the client never hangs up)."""
    import asyncio

    sent: list[dict] = []
    messages = [{"type": "http.request", "body": json.dumps(message).encode(), "more_body": False}]

    async def receive() -> dict:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            *headers,
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    await app(scope, receive, send)
    return sent


def line(message: dict) -> bytes:
    """One newline-delimited JSON-RPC message, as stdio carries it."""
    return (json.dumps(message) + "\n").encode()


def serve_script(script: Path, messages: list[dict]) -> tuple[subprocess.CompletedProcess, list[Any]]:
    """Runs a Python script that serves stdio, feeding it `messages` and then end of input;
    returns the finished process and the messages it wrote to stdout."""
    done = subprocess.run(
        [sys.executable, str(script)],
        input=b"".join(line(m) for m in messages),
        capture_output=True,
        timeout=30,
    )
    return done, [json.loads(text) for text in done.stdout.splitlines()]


class Client:
    """Drives a toolwire Session the way a client would, for tests."""

    def __init__(self, server: Any) -> None:
        self.session = server.session()

    def send(self, message: Any) -> None:
        self.session.handle_frame(json.dumps(message))

    def recv(self, timeout: float = 10.0) -> Any:
        frame = self.session.recv(timeout)
        assert frame is not None, "no frame from the server"
        return json.loads(frame)

    def initialize(self, version: str = "2025-11-25", capabilities: Optional[dict] = None) -> Any:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "pytest", "version": "1"},
                },
            }
        )
        answer = self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, id: Any, name: str, arguments: Optional[dict] = None, meta: Optional[dict] = None) -> None:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        self.send({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})

    def finish(self) -> list[str]:
        self.session.shutdown()
        rest = []
        while (frame := self.session.recv(2.0)) is not None:
            rest.append(frame)
        return rest


@pytest.fixture
def client_for():
    def make(server: Any, version: str = "2025-11-25", capabilities: Optional[dict] = None) -> Client:
        client = Client(server)
        client.initialize(version, capabilities)
        return client

    return make


def run_pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """A fresh pytest in `folder`, as a user runs it there: none of this suite's configuration,
    strict asyncio mode (pytest-asyncio's default)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            "/dev/null",
            "--rootdir",
            str(folder),
            *args,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
