"""server.run() over real stdio: answers, stdout hygiene, and Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from conftest import INITIALIZE, ROOT, line, serve_script

DEMO = [sys.executable, str(ROOT / "examples" / "python" / "toolwire_demo.py")]


def test_ctrl_c_stops_serving_after_calls_in_flight_finish() -> None:
    # A shell that started the test run in the background without job control made SIGINT
    # ignored for everything it spawns; give the demo the default disposition, as a terminal's
    # Ctrl-C would find it.
    proc = subprocess.Popen(
        DEMO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(line(INITIALIZE))
    # With a progress token the demo's sleep reports progress every 100 ms.
    params = {"name": "sleep", "arguments": {"ms": 300}, "_meta": {"progressToken": "p"}}
    proc.stdin.write(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    # The first progress report: the call is in flight.
    assert json.loads(proc.stdout.readline())["method"] == "notifications/progress"
    proc.send_signal(signal.SIGINT)  # stdin stays open: only the signal can end it
    while "id" not in (answer := json.loads(proc.stdout.readline())):
        assert answer["method"] == "notifications/progress"
    assert answer["result"]["content"][0]["text"] == "slept 300 ms"
    assert proc.wait(timeout=10) == 0
    assert proc.stdout.read() == b"", "nothing but protocol on stdout"


def test_print_in_a_tool_goes_to_stderr(tmp_path) -> None:
    script = tmp_path / "printing.py"
    script.write_text(
        "from toolwire import Server\n"
        "server = Server('p')\n"
        "@server.tool()\n"
        "def noisy() -> str:\n"
        "    print('this must not reach stdout')\n"
        "    return 'ok'\n"
        "server.run()\n"
    )
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "noisy", "arguments": {}}},
    ]
    done, answers = serve_script(script, messages)
    assert done.returncode == 0
    assert [a["id"] for a in answers] == [0, 1]
    assert b"this must not reach stdout" in done.stderr


def test_serving_stdio_twice_fails_with_busy_and_leaves_the_first_serving(tmp_path) -> None:
    """Stdin is served once at a time: a second `run_async()` (another server, or the same one)
    raises BusyError, and the first serve keeps its loop and its stop token."""
    script = tmp_path / "twice.py"
    script.write_text(
        "import asyncio, sys, threading\n"
        "from toolwire import BusyError, Server\n"
        "a, b = Server('a'), Server('b')\n"
        "first_call, second_call = threading.Event(), threading.Event()\n"
        "@a.tool()\n"
        "async def ping(n: int) -> str:\n"
        "    (first_call if n == 1 else second_call).set()\n"
        "    return f'pong {n}'\n"
        "async def main() -> None:\n"
        "    loop = asyncio.get_running_loop()\n"
        "    serving = asyncio.ensure_future(a.run_async())\n"
        "    await loop.run_in_executor(None, first_call.wait)\n"
        "    for server in (b, a):\n"
        "        try:\n"
        "            await server.run_async()\n"
        "        except BusyError as err:\n"
        "            print('busy:', err, file=sys.stderr, flush=True)\n"
        "    await loop.run_in_executor(None, second_call.wait)\n"
        "    a.stop()  # stdin stays open: only the first serve's stop token can end it\n"
        "    await serving\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout and proc.stderr

    def call(id_: int) -> None:
        params = {"name": "ping", "arguments": {"n": id_}}
        proc.stdin.write(line({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}))
        proc.stdin.flush()

    try:
        proc.stdin.write(line(INITIALIZE))
        call(1)
        assert json.loads(proc.stdout.readline())["id"] == 0
        assert json.loads(proc.stdout.readline())["result"]["content"][0]["text"] == "pong 1"
        refusals = [proc.stderr.readline().decode() for _ in range(2)]
        assert all(r.startswith("busy: busy: stdin is already being served") for r in refusals), refusals
        call(2)  # an `async def` tool of the first serve still runs on its loop
        assert json.loads(proc.stdout.readline())["result"]["content"][0]["text"] == "pong 2"
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
