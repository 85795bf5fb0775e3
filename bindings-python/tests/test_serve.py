"""server.run() over real stdio: answers, stdout hygiene, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Optional

import pytest
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


def _serve(script, messages):
    done, answers = serve_script(script, messages)
    assert done.returncode == 0, done.stderr.decode()
    return {a["id"]: a for a in answers if "id" in a}


def _call(id_: int, name: str, arguments: Optional[dict] = None) -> dict:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def _text(answer: dict) -> str:
    return answer["result"]["content"][0]["text"]


def _start(script, **popen) -> subprocess.Popen:
    """The script serving stdio, talked to through pipes, with SIGINT at its default (a shell
    that started the tests in the background without job control has it ignored)."""
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **popen,
    )
    assert proc.stdin and proc.stdout
    return proc


def test_importing_toolwire_does_not_import_asyncio() -> None:
    # asyncio is tens of milliseconds of a start on a small machine; a loop is made only where
    # one is used.
    code = "import sys, toolwire; print('asyncio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stdout.strip() == b"False", done.stderr.decode()


def test_a_server_of_plain_functions_serves_stdio_without_asyncio(tmp_path) -> None:
    script = tmp_path / "plain.py"
    script.write_text(
        "import sys\n"
        "from toolwire import Server\n"
        "server = Server('plain')\n"
        "@server.tool()\n"
        "def loaded() -> str:\n"
        "    return str('asyncio' in sys.modules)\n"
        "server.run()\n"
    )
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answers = _serve(script, [INITIALIZE, listed, _call(2, "loaded")])
    assert [t["name"] for t in answers[1]["result"]["tools"]] == ["loaded"]
    assert _text(answers[2]) == "False"


def test_an_async_tool_added_while_serving_without_a_loop_runs_on_one(tmp_path) -> None:
    script = tmp_path / "later.py"
    script.write_text(
        "import sys\n"
        "from toolwire import Server\n"
        "server = Server('later')\n"
        "@server.tool()\n"
        "def add() -> str:\n"
        "    @server.tool()\n"
        "    async def later(n: int) -> str:\n"
        "        import asyncio\n"
        "        await asyncio.sleep(0)\n"
        "        return f'later {n}'\n"
        "    return 'added'\n"
        "server.run()\n"
    )
    proc = _start(script)
    assert proc.stdin and proc.stdout

    def ask(message: dict) -> dict:
        # One at a time: calls in one burst would run concurrently, `later` before `add`.
        proc.stdin.write(line(message))
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    assert ask(INITIALIZE)["id"] == 0
    assert _text(ask(_call(1, "add"))) == "added"
    assert _text(ask(_call(2, "later", {"n": 7}))) == "later 7"
    assert _text(ask(_call(3, "later", {"n": 8}))) == "later 8"
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0


def test_serving_stdio_twice_without_a_loop_fails_with_busy(tmp_path) -> None:
    # The second serve's BusyError reaches its caller (here a tool, whose call fails with it);
    # the first serve goes on.
    script = tmp_path / "busy.py"
    script.write_text(
        "from toolwire import Server\n"
        "server = Server('busy')\n"
        "@server.tool()\n"
        "def again() -> str:\n"
        "    server.run()\n"
        "    return 'served twice'\n"
        "@server.tool()\n"
        "def ping() -> str:\n"
        "    return 'pong'\n"
        "server.run()\n"
    )
    answers = _serve(script, [INITIALIZE, _call(1, "again"), _call(2, "ping")])
    assert answers[1]["result"]["isError"] is True
    assert "stdin" in _text(answers[1]).lower()
    assert _text(answers[2]) == "pong"


@pytest.mark.parametrize("spawned", [True, False], ids=["after-the-thread-began", "before-it-began"])
def test_ctrl_c_while_the_serving_thread_starts_still_stops_the_server(tmp_path, spawned) -> None:
    # Ctrl-C can land inside `Thread.start()`, which waits for the new thread to begin: the
    # serve then runs, and run() must stop it rather than return and leave the process
    # waiting on it at exit (an exit hang seen about once in 25 runs of the test below).
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import threading\n"
        "from toolwire import Server\n"
        "real_start = threading.Thread.start\n"
        "def start(thread):\n"
        "    if thread.name != 'toolwire-stdio':\n"
        "        return real_start(thread)\n"
        f"    if {spawned}:\n"
        "        real_start(thread)\n"
        "    raise KeyboardInterrupt\n"
        "threading.Thread.start = start\n"
        "server = Server('interrupted')\n"
        "@server.tool()\n"
        "def ping() -> str:\n"
        "    return 'pong'\n"
        "server.run()\n"
        "print('run returned', flush=True)\n"
    )
    proc = _start(script)  # stdin stays open: only the interrupt can end the serve
    try:
        assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else b""
    finally:
        proc.kill()
    assert proc.stdout.read() == b"run returned\n"  # after the serve, stdout is stdout again


def test_ctrl_c_stops_a_server_without_a_loop_after_calls_in_flight_finish(tmp_path) -> None:
    # The tool is in flight until the test, having sent Ctrl-C, writes a byte to its pipe.
    release_read, release_write = os.pipe()
    script = tmp_path / "slow.py"
    script.write_text(
        "import os\n"
        "from toolwire import Context, Server\n"
        "server = Server('slow')\n"
        "@server.tool()\n"
        "def slow(ctx: Context) -> str:\n"
        "    ctx.progress(1)\n"
        f"    os.read({release_read}, 1)\n"
        "    return 'finished'\n"
        "server.run()\n"
    )
    proc = _start(script, pass_fds=(release_read,))
    os.close(release_read)
    assert proc.stdin and proc.stdout
    proc.stdin.write(line(INITIALIZE))
    call = _call(1, "slow")
    call["params"]["_meta"] = {"progressToken": "p"}
    proc.stdin.write(line(call))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    assert json.loads(proc.stdout.readline())["method"] == "notifications/progress"
    proc.send_signal(signal.SIGINT)  # stdin stays open: only the signal can end it
    os.write(release_write, b"x")
    os.close(release_write)
    assert _text(json.loads(proc.stdout.readline())) == "finished"
    assert proc.wait(timeout=10) == 0, proc.stderr.read() if proc.stderr else b""
    assert proc.stdout.read() == b""
