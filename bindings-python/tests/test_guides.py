"""The guides' examples (examples/guides, included by docs/guides/*.md) do what the pages say:
each guide's Python server and its test, copied into a folder of their own, pass under pytest as
a user runs them there."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT, run_pytest_in

GUIDES = ROOT / "examples" / "guides"


@pytest.mark.parametrize(
    ("guide", "tests"),
    [("resources", 1), ("context", 2), ("http", 1), ("middleware", 1), ("auth", 1), ("tasks", 2), ("replicas", 1)],
)
def test_the_guide_example_passes_its_own_test(tmp_path, guide, tests) -> None:
    sources = sorted((GUIDES / guide / "python").glob("*.py"))
    assert any(path.name.startswith("test_") for path in sources), "each guide's example has a test"
    for path in sources:
        shutil.copy(path, tmp_path / path.name)
    run = run_pytest_in(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{tests} passed" in run.stdout, run.stdout
