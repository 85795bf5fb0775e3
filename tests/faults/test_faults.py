"""Fault injection against a language's demo server (TOOLWIRE_DEMO_LANG, default rust), from
outside the process:

- handlers that panic or throw, hang past their timeout, or return a result their output schema
  refuses, mixed into verified load over stdio and over Streamable HTTP (the load generator's
  `--faults`, against the demo's `--fault-tools`);
- the client killed mid-call (stdio: the server ends on its own; HTTP: everyone else is served);
- the server's stdout closed under it (it ends with an error, it does not hang or spin);
- `kill -9` of a server under load: the clients get a clean error, and a server restarted on
  the same port serves again (there is no state on disk to corrupt; old sessions get 404).

Every wait is for an event (a line, an exit, an answer) with a bound that only fails the test.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "interop" / "python"))
from logwatch import LogWatch  # noqa: E402

RUN_DEMO = ROOT / "examples" / "run-demo"
# A release build, or the one in TOOLWIRE_RUST_BIN_DIR (scripts/lib.sh; scripts/test-all: its debug build).
LOADGEN = Path(os.environ.get("TOOLWIRE_RUST_BIN_DIR") or ROOT / "target" / "release") / "toolwire-loadgen"
LANG = os.environ.get("TOOLWIRE_DEMO_LANG", "rust")
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}},
}


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    """The demo built (or installed) before anything is timed: started once, it ends at EOF."""
    subprocess.run([str(RUN_DEMO), LANG], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True, timeout=900)


def loadgen(*args: str, log: Path) -> dict[str, Any]:
    """Runs the load generator (its server's stderr to `log`); its JSON report."""
    with log.open("w") as stderr:
        done = subprocess.run([str(LOADGEN), *args], stdout=subprocess.PIPE, stderr=stderr, timeout=600)
    report = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert done.returncode == 0, f"{report}\n--- server stderr (tail) ---\n{log.read_text()[-4000:]}"
    return report


def check_outcomes(report: dict[str, Any], calls: int) -> None:
    outcomes = report["outcomes"]
    assert outcomes["echoes_verified"] == calls * 7 // 10, outcomes
    per_tool: dict[str, int] = {}
    for key, count in outcomes["faults"].items():
        tool = key.split(":")[0]
        per_tool[tool] = per_tool.get(tool, 0) + count
    assert per_tool == {"crash": calls // 10, "malformed": calls // 10, "hang": calls // 10}, outcomes


def test_faults_mixed_into_load_over_stdio(tmp_path: Path) -> None:
    calls = 20_000
    report = loadgen(
        "--faults",
        str(calls),
        "--pipeline",
        "64",
        "--",
        str(RUN_DEMO),
        LANG,
        "--fault-tools",
        log=tmp_path / "stderr.log",
    )
    check_outcomes(report, calls)
    assert report["outcomes"]["cancelled_sleeps"] == calls // 50


def test_faults_mixed_into_load_over_http(tmp_path: Path) -> None:
    calls = 10_000
    report = loadgen(
        "--http",
        "--faults",
        str(calls),
        "--clients",
        "32",
        "--",
        str(RUN_DEMO),
        LANG,
        "--fault-tools",
        "--http",
        "{port}",
        log=tmp_path / "stderr.log",
    )
    check_outcomes(report, calls)


class Demo:
    """A demo server over Streamable HTTP, its stderr watched."""

    def __init__(self, port: int = 0) -> None:
        self.process = subprocess.Popen(
            [str(RUN_DEMO), LANG, "--http", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        stderr = self.process.stderr
        assert stderr
        self.log = LogWatch(lambda: stderr)
        match = self.log.wait_for(r"listening on (http://\S+)\s", 180)
        if match is None:
            self.process.kill()
            raise RuntimeError(f"the demo did not start:\n{self.log.text()}")
        self.url: str = match.group(1)
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def demo() -> Iterator[Demo]:
    server = Demo()
    try:
        yield server
    finally:
        server.stop()


def post(url: str, body: Any, session: Optional[str] = None, timeout: float = 15) -> tuple[int, dict[str, str], bytes]:
    headers = dict(HEADERS)
    if session:
        headers.update({"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def answer_of(body: bytes) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON or SSE body."""
    text = body.decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads([d for d in data if d.startswith("{") and '"id"' in d][-1])


def open_session(url: str) -> str:
    status, headers, _ = post(url, INIT)
    assert status == 200
    session = headers["mcp-session-id"]
    status, _, _ = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status == 202
    return session


# Request ids unique across threads: a session refuses an id already in flight.
REQUEST_IDS = itertools.count(1)


def echo(url: str, session: str, text: str) -> None:
    params = {"name": "echo", "arguments": {"text": text}}
    call = {"jsonrpc": "2.0", "id": next(REQUEST_IDS), "method": "tools/call", "params": params}
    status, _, body = post(url, call, session)
    assert status == 200, body
    answer = answer_of(body)
    assert "result" in answer and answer["result"]["content"][0]["text"] == text, answer


# A client in its own process: opens a session, starts a long call whose progress streams, says
# so on stdout once the stream's head has come, then waits to be killed.
CLIENT_IN_FLIGHT = r"""
import json, sys, urllib.request
url = sys.argv[1]
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
def post(body, session=None):
    h = dict(headers)
    if session:
        h.update({"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    return urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), h, method="POST"))
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "doomed", "version": "1"}}}
response = post(init)
session = response.headers["mcp-session-id"]
response.read()
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session).read()
call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 60000}, "_meta": {"progressToken": "p"}}}
stream = post(call, session)
stream.readline()
print("in flight", flush=True)
sys.stdin.read()
"""


def test_a_client_killed_mid_call_leaves_everyone_else_served(demo: Demo) -> None:
    doomed = subprocess.Popen(
        [sys.executable, "-c", CLIENT_IN_FLIGHT, demo.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert doomed.stdout
    assert doomed.stdout.readline() == b"in flight\n"
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    session = open_session(demo.url)
    for i in range(20):
        echo(demo.url, session, f"after the kill {i}")
    assert demo.process.poll() is None


def stdio_demo() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(RUN_DEMO), LANG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


def send(process: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert process.stdin
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    process.stdin.flush()


def test_a_stdio_client_that_dies_mid_call_ends_the_server() -> None:
    server = stdio_demo()
    assert server.stdout
    send(server, INIT)
    assert json.loads(server.stdout.readline())["id"] == 0
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 60000}}}
    send(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call)
    # The client is gone: both pipes close, the long call still running.
    assert server.stdin
    server.stdin.close()
    server.stdout.close()
    # It ends by itself, within its drain timeout (5 s) and start-up slack, not by a signal.
    code = server.wait(timeout=60)
    assert code >= 0, f"ended by signal {-code}"


def test_the_server_ends_cleanly_by_itself_when_its_stdout_is_closed() -> None:
    server = stdio_demo()
    assert server.stdout
    server.stdout.close()
    # Answers now have nowhere to go; stdin stays open, so only the failed write can end it.
    try:
        for i in range(200):
            send(server, INIT if i == 0 else {"jsonrpc": "2.0", "id": i, "method": "ping"})
    except BrokenPipeError:
        pass  # it ended while we wrote: what the test waits for
    code = server.wait(timeout=60)
    assert server.stdin
    try:
        server.stdin.close()
    except BrokenPipeError:
        pass
    # The client is gone, as at the end of stdin: a normal end, not a signal (SIGPIPE) or a crash.
    assert code == 0, f"ended with {code}" if code > 0 else f"ended by signal {-code}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_kill_9_under_load_then_a_restart_serves_again() -> None:
    server = Demo(free_port())
    port = server.port
    session = open_session(server.url)
    echo(server.url, session, "before")
    errors: list[BaseException] = []
    served = threading.Semaphore(0)
    stop = threading.Event()

    def load() -> None:
        try:
            while not stop.is_set():
                echo(server.url, session, "under load")
                served.release()
        except (OSError, http.client.HTTPException) as err:  # refused, reset, cut short
            errors.append(err)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for _ in range(40):
        assert served.acquire(timeout=30), "the load was not being served"
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), "a client hung on a killed server"
    stop.set()
    # Every client saw a clean connection error, nothing else.
    assert len(errors) == len(threads), errors
    # Restarted on the same port: serves again; the old session is unknown (404), a new one works.
    again = Demo(port)
    try:
        assert again.url == server.url
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        status, _, _ = post(again.url, ping, session)
        assert status == 404
        fresh = open_session(again.url)
        echo(again.url, fresh, "after the restart")
    finally:
        again.stop()
