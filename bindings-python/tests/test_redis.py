"""Two servers sharing one real Redis (`redis-server` on loopback, started here) act as two
replicas: a task created over HTTP on one is read and answered through the other, and
completes; a Redis that cannot be reached fails the constructor, naming the URL.

Needs `redis-server` on PATH (`scripts/test-all` installs Debian's package when missing)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolwire import Context, Server, TransportError

TASKS = "io.modelcontextprotocol/tasks"
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
SECRET = "a shared requestState secret of at least 32 bytes"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    child = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    try:
        # Ready when it answers: polled with a deadline.
        deadline = time.monotonic() + 10
        while not pings(port):
            assert child.poll() is None, "redis-server exited"
            assert time.monotonic() < deadline, "redis-server never answered"
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        child.kill()
        child.wait()


def replica(redis: str) -> Server:
    server = Server("replica", "1", redis=redis, request_state_keys=[SECRET])

    @server.tool(input_schema=NO_ARGS, task_support="optional")
    async def confirm_delete(ctx: Context) -> str:
        answer = await ctx.elicit({"message": "Delete?", "requestedSchema": {"type": "object", "properties": {}}})
        return f"answered {answer['action']}"

    return server


def post(url: str, id: int, method: str, params: dict[str, Any], name: str) -> Any:
    """One 2026-07-28 request over HTTP (blocking: run it off the loop), its JSON-RPC answer."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
    }
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
    }
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            kind, text = response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as err:
        pytest.fail(f"{method}: HTTP {err.code}: {err.read()!r}")
    if kind.startswith("text/event-stream"):
        text = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:]][-1]
    return json.loads(text)


async def wait_for(url: str, task: str, status: str) -> Any:
    """Polls `tasks/get` through `url` until the task reaches `status` or ends, for up to 10 s."""
    deadline = time.monotonic() + 10
    id = 100
    while time.monotonic() < deadline:
        id += 1
        answer = await asyncio.to_thread(post, url, id, "tasks/get", {"taskId": task}, task)
        now = answer["result"]
        if now["status"] in (status, "completed", "failed", "cancelled"):
            return now
    pytest.fail(f"the task never got to {status}")


async def test_a_task_created_on_one_replica_is_answered_through_the_other(redis_url: str) -> None:
    one, two = replica(redis_url), replica(redis_url)
    http_one = await one.serve_http("127.0.0.1", 0)
    http_two = await two.serve_http("127.0.0.1", 0)
    try:
        call = {"name": "confirm_delete", "arguments": {}}
        created = (await asyncio.to_thread(post, http_one.url, 1, "tools/call", call, "confirm_delete"))["result"]
        assert created["resultType"] == "task", created
        task = created["taskId"]
        parked = await wait_for(http_two.url, task, "input_required")
        assert parked["status"] == "input_required", parked
        ((key, question),) = parked["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        update = {"taskId": task, "inputResponses": {key: {"action": "accept"}}}
        ack = await asyncio.to_thread(post, http_two.url, 2, "tasks/update", update, task)
        assert ack["result"]["resultType"] == "complete", ack
        done = await wait_for(http_two.url, task, "completed")
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "answered accept", done
        # The first replica reads the same outcome.
        assert (await wait_for(http_one.url, task, "completed"))["status"] == "completed"
    finally:
        for http in (http_one, http_two):
            http.stop()
            await http.wait()


def test_an_unreachable_redis_fails_the_constructor_naming_it() -> None:
    url = "redis://127.0.0.1:1/0"
    with pytest.raises(TransportError, match="redis://127.0.0.1:1/0"):
        Server("replica", "1", redis=url)
    with pytest.raises(ValueError, match="not-a-url"):
        Server("replica", "1", redis="not-a-url")
