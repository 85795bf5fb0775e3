"""Replays the shared golden wire vectors (tests/vectors) against the Python demo server, with
core's replayer (`toolwire.testing.replay_vector`): the format is read once, for every language."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import ROOT
from toolwire.testing import replay_vector
from toolwire_conformance import build_conformance_server
from toolwire_demo import build_server

VECTORS = sorted((ROOT / "tests" / "vectors").glob("*.json"))
CASES = [case for path in VECTORS for case in json.loads(path.read_text())["cases"]]


def build(case: dict) -> Any:
    """The demo of the shared contract, or the conformance server (its tasks fixtures)."""
    options = server_options(case.get("options", {}))
    server = case.get("server", "demo")
    if server == "conformance":
        assert not options, "the conformance server takes no options here"
        return build_conformance_server()
    assert server == "demo", f"unknown server {server!r}"
    return build_server(**options)


def server_options(options: dict) -> dict:
    names = {"pageSize": "page_size", "maxFrameBytes": "max_frame_bytes", "maxDepth": "max_depth"}
    return {names[k]: v for k, v in options.items()}


def test_there_are_enough_vectors() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case: dict) -> None:
    replay_vector(build(case), case)
