"""The Kotlin demo's class-data archive (examples/kotlin/class-data-archive), as run-demo uses it.

run-demo starts the JVM with the archive when it can be made, makes it again when the jars or the
JVM it was made for changed (its stamp), and sends the JVM's own warnings to stderr: an archive
the JVM refuses makes it warn, and on stdout (its default) that warning would be read as the
first protocol message.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUN_DEMO = ROOT / "examples" / "run-demo"
TARGET = ROOT / "examples" / "kotlin" / "target"
DEMO_JAR = TARGET / "toolwire-demo-0.1.0.jar"
ARCHIVE = TARGET / "toolwire-demo.jsa"
STAMP = TARGET / "toolwire-demo.jsa.stamp"
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


def stamp_now() -> str:
    """What an archive made now would be made for (the jars and the JVM)."""
    script = [str(ROOT / "examples/kotlin/class-data-archive"), "--stamp"]
    return subprocess.run(script, capture_output=True, text=True, check=True).stdout


def make_archive_unless_current() -> None:
    if not (ARCHIVE.is_file() and STAMP.is_file() and STAMP.read_text() == stamp_now()):
        subprocess.run([str(ROOT / "examples/kotlin/class-data-archive")], check=True, timeout=120)


@pytest.fixture
def fresh_archive():
    """An archive made for the demo as it is, before the test and after it."""
    make_archive_unless_current()
    yield
    make_archive_unless_current()


def test_run_demo_makes_the_archive_and_the_jvm_maps_it(fresh_archive) -> None:
    ARCHIVE.unlink()
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


@pytest.mark.parametrize("shift_s", [-10, 10])
def test_an_archive_made_for_other_jars_is_made_again(fresh_archive, shift_s: int) -> None:
    # The JVM refuses an archive when a jar's time differs either way: so does run-demo's stamp.
    made = DEMO_JAR.stat().st_mtime_ns
    stamp = STAMP.read_text()
    os.utime(DEMO_JAR, ns=(made + shift_s * 1_000_000_000,) * 2)
    try:
        first_answer([str(RUN_DEMO), "kotlin"])
        assert STAMP.read_text() != stamp, "not made again"
    finally:
        os.utime(DEMO_JAR, ns=(made, made))


def test_an_archive_the_jvm_refuses_costs_only_speed_and_its_warning_goes_to_stderr(
    fresh_archive,
) -> None:
    # A refusal the stamp cannot foresee: the jar's time moved and the stamp written to match,
    # so run-demo starts the JVM with the archive, which refuses it and warns (on stdout,
    # without run-demo's flags).
    made = DEMO_JAR.stat().st_mtime_ns
    os.utime(DEMO_JAR, ns=(made - 1_000_000_000,) * 2)
    try:
        STAMP.write_text(stamp_now())
        answer, stderr = first_answer([str(RUN_DEMO), "kotlin"])
    finally:
        os.utime(DEMO_JAR, ns=(made, made))
    assert answer["id"] == 0 and "supportedVersions" in answer["result"]
    assert re.search(r"(?i)shared archive", stderr), stderr
