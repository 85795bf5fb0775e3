"""The Kotlin demo's class-data archive (examples/kotlin/class-data-archive), as run-demo uses it.

run-demo starts the JVM with the archive when it can be made, remakes it when the demo's jar is
newer, and sends the JVM's own warnings to stderr: a stale or foreign archive makes the JVM warn,
and on stdout (its default) that warning would be read as the first protocol message.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUN_DEMO = ROOT / "examples" / "run-demo"
TARGET = ROOT / "examples" / "kotlin" / "target"
DEMO_JAR = TARGET / "toolwire-demo-0.1.0.jar"
ARCHIVE = TARGET / "toolwire-demo.jsa"
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def first_answer(command: list[str]) -> tuple[dict, str]:
    """Sends server/discover to a fresh server; its first stdout line (parsed) and its stderr."""
    done = subprocess.run(
        command,
        input=json.dumps(DISCOVER) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    first_line = done.stdout.splitlines()[0] if done.stdout else ""
    return json.loads(first_line), done.stderr


@pytest.fixture
def fresh_archive():
    """The archive as run-demo leaves it, made again after a test that spoiled it."""
    yield
    ARCHIVE.unlink(missing_ok=True)
    subprocess.run([str(ROOT / "examples/kotlin/class-data-archive")], check=True, timeout=120)


def test_run_demo_makes_the_archive_and_the_jvm_maps_it(fresh_archive) -> None:
    ARCHIVE.unlink(missing_ok=True)
    answer, _ = first_answer([str(RUN_DEMO), "kotlin"])
    assert answer["result"]["supportedVersions"] == ["2026-07-28"]
    assert ARCHIVE.stat().st_size > 0
    # -Xshare:on makes a JVM that cannot map the archive refuse to start: it maps.
    answer, _ = first_answer(
        [
            "java",
            "-Xshare:on",
            f"-XX:SharedArchiveFile={ARCHIVE}",
            "-cp",
            f"{DEMO_JAR}:{TARGET}/lib/*",
            "dev.toolwire.demo.DemoKt",
        ]
    )
    assert answer["id"] == 0 and "supportedVersions" in answer["result"]


def test_an_archive_older_than_the_demo_is_made_again(fresh_archive) -> None:
    older = DEMO_JAR.stat().st_mtime_ns - 10_000_000_000
    os.utime(ARCHIVE, ns=(older, older))
    first_answer([str(RUN_DEMO), "kotlin"])
    assert ARCHIVE.stat().st_mtime_ns > DEMO_JAR.stat().st_mtime_ns


def test_an_archive_the_jvm_refuses_costs_only_speed_and_its_warning_goes_to_stderr(
    fresh_archive,
) -> None:
    # The demo's jar a second older than when the archive was made: still older than the
    # archive, so run-demo keeps it, but not the jar the archive recorded, so the JVM refuses it
    # and warns (on stdout, without run-demo's flags).
    made = DEMO_JAR.stat().st_mtime_ns
    os.utime(DEMO_JAR, ns=(made - 1_000_000_000, made - 1_000_000_000))
    try:
        answer, stderr = first_answer([str(RUN_DEMO), "kotlin"])
    finally:
        os.utime(DEMO_JAR, ns=(made, made))
    assert answer["id"] == 0 and "supportedVersions" in answer["result"]
    assert "Unable to use shared archive" in stderr
