"""The migration guide's example (examples/migration/python, included by
docs/migration/python-sdk.md) does what the page says: the official SDK's server, its toolwire
port and the test that drives both with the SDK's client, copied into a folder of their own,
pass under pytest as a user runs them there."""

from __future__ import annotations

import shutil

from conftest import ROOT, run_pytest_in

MIGRATION = ROOT / "examples" / "migration" / "python"


def test_the_migration_example_passes_its_own_test(tmp_path) -> None:
    for name in ("sdk_server.py", "toolwire_server.py", "test_both.py"):
        shutil.copy(MIGRATION / name, tmp_path / name)
    run = run_pytest_in(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    # Both eras (2025-11-25 and 2026-07-28), and the line-by-line difference of the two servers.
    assert "3 passed" in run.stdout
