"""Plain `def` handlers run on a bounded set of threads: many calls at once do not start a
thread each (they did on tokio's blocking pool, and each new thread kept its stack and
allocator caches for good)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import INITIALIZE, serve_script

CALLS = 200

SERVER = textwrap.dedent(
    f"""
    import os, threading, time
    from toolwire import Server

    server = Server("threads")
    done = 0
    lock = threading.Lock()
    all_done = threading.Event()

    @server.tool()
    def work() -> str:
        global done
        time.sleep(0.002)  # the GIL is released meanwhile: another thread may start
        with lock:
            done += 1
            if done == {CALLS}:
                all_done.set()
        return "ok"

    @server.tool()
    def threads() -> int:
        # Counted once every work call has run: the most there were.
        assert all_done.wait(timeout=20), "the work calls did not all run"
        names = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{{task}}/comm") as comm:
                names.append(comm.read().strip())
        return names.count("toolwire-python")

    server.run()
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_many_sync_calls_at_once_run_on_a_bounded_set_of_threads(tmp_path: Path) -> None:
    script = tmp_path / "threads_server.py"
    script.write_text(SERVER)
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    messages = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [{**call, "id": i, "params": {"name": "work", "arguments": {}}} for i in range(1, CALLS + 1)]
    messages.append({**call, "id": "count", "params": {"name": "threads", "arguments": {}}})
    done, answers = serve_script(script, messages)
    assert done.returncode == 0, done.stderr.decode()
    by_id = {answer.get("id"): answer for answer in answers}
    assert all(by_id[i]["result"]["content"][0]["text"] == "ok" for i in range(1, CALLS + 1))
    count = by_id["count"]["result"]
    assert not count.get("isError"), count
    threads = int(count["content"][0]["text"])
    # Python's ThreadPoolExecutor default, which is ours: min(32, CPUs + 4).
    assert 1 <= threads <= min(32, len(os.sched_getaffinity(0)) + 4), threads
