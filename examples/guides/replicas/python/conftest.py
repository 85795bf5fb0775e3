"""A redis-server of the tests' own, on a free loopback port (Debian's `redis-server` on PATH)."""

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    redis = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not answers(port):  # ready when it answers
            assert redis.poll() is None and time.monotonic() < deadline, "redis-server did not start"
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        redis.kill()
        redis.wait()
