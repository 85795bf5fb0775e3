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
