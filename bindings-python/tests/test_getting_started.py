"""The getting-started examples (examples/hello, included by docs/getting-started/*.md) do what
the pages say: the Python server's test passes under pytest as a user runs it, and the official
MCP Python SDK's client script drives the server and prints what the page shows."""

from __future__ import annotations

import shutil
import subprocess
import sys

from conftest import ROOT, run_pytest_in

HELLO = ROOT / "examples" / "hello"


def test_the_hello_test_passes_under_pytest(tmp_path) -> None:
    for name in ("hello.py", "test_hello.py"):
        shutil.copy(HELLO / "python" / name, tmp_path / name)
    run = run_pytest_in(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_the_sdk_client_drives_the_hello_server() -> None:
    run = subprocess.run(
        [sys.executable, str(HELLO / "client.py"), sys.executable, str(HELLO / "python" / "hello.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # As docs/getting-started/python.md shows it.
    assert run.stdout.splitlines() == ["tools: ['greet']", "greet: Hello, Ada!"]
    page = (ROOT / "docs" / "getting-started" / "python.md").read_text()
    assert "tools: ['greet']\ngreet: Hello, Ada!\n" in page
