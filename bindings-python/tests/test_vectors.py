"""Replays the shared golden wire vectors (tests/vectors) against the Python demo server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import ROOT, Client
from toolwire_conformance import build_conformance_server
from toolwire_demo import build_server

VECTORS = sorted((ROOT / "tests" / "vectors").glob("*.json"))
CASES = [case for path in VECTORS for case in json.loads(path.read_text())["cases"]]


def matches(pattern: Any, actual: Any) -> bool:
    if isinstance(pattern, str):
        if pattern == "$any":
            return True
        if pattern == "$string":
            return isinstance(actual, str)
        if pattern == "$number":
            return isinstance(actual, (int, float)) and not isinstance(actual, bool)
        if pattern.startswith("$capture:"):
            return isinstance(actual, str)
        if pattern.startswith("$prefix:"):
            return isinstance(actual, str) and actual.startswith(pattern[len("$prefix:") :])
    if isinstance(pattern, dict):
        return (
            isinstance(actual, dict)
            and pattern.keys() == actual.keys()
            and all(matches(v, actual[k]) for k, v in pattern.items())
        )
    if isinstance(pattern, list):
        return (
            isinstance(actual, list)
            and len(pattern) == len(actual)
            and all(matches(p, a) for p, a in zip(pattern, actual))
        )
    if isinstance(pattern, bool) or isinstance(actual, bool):
        return pattern is actual
    return pattern == actual


def matches_unordered(patterns: list, actual: list) -> bool:
    if len(patterns) != len(actual):
        return False
    used = [False] * len(actual)
    for pattern in patterns:
        for i, item in enumerate(actual):
            if not used[i] and matches(pattern, item):
                used[i] = True
                break
        else:
            return False
    return True


class Captured:
    """Strings a case captured in an expectation ("$capture:NAME", e.g. a task id) and uses in
    later steps ("$var:NAME", in what it sends and what it expects)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith("$var:"):
            name = value[len("$var:") :]
            assert name in self.values, f"{value}: nothing captured as {name!r} yet"
            return self.values[name]
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: self.resolve(item) for key, item in value.items()}
        return value

    def record(self, pattern: Any, actual: Any) -> None:
        """After `actual` matched `pattern`: what each "$capture:NAME" stood for (the same
        string each time a name is captured)."""
        if isinstance(pattern, str) and pattern.startswith("$capture:"):
            name = pattern[len("$capture:") :]
            known = self.values.setdefault(name, actual)
            assert known == actual, f"{name!r} was {known!r}, now {actual!r}"
        elif isinstance(pattern, list) and isinstance(actual, list):
            for p, a in zip(pattern, actual):
                self.record(p, a)
        elif isinstance(pattern, dict) and isinstance(actual, dict):
            for key, p in pattern.items():
                if key in actual:
                    self.record(p, actual[key])


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
    client = Client(build(case))
    captured = Captured()
    if "initialize" in case:
        answer = client.initialize(case["initialize"], case.get("clientCapabilities"))
        assert answer["result"]["protocolVersion"] == case["initialize"]
    for index, step in enumerate(case["steps"]):
        where = f"step {index}"
        step = captured.resolve(step)
        if "send" in step:
            client.send(step["send"])
        elif "sendRaw" in step:
            client.session.handle_frame(step["sendRaw"].encode())
        elif "sendHex" in step:
            client.session.handle_frame(bytes.fromhex(step["sendHex"]))
        elif "expect" in step:
            got = client.recv()
            assert matches(step["expect"], got), f"{where}: expected {step['expect']}\n got {got}"
            captured.record(step["expect"], got)
        elif "expectUnordered" in step:
            got = [client.recv() for _ in step["expectUnordered"]]
            assert matches_unordered(step["expectUnordered"], got), f"{where}: got {got}"
        elif "expectUnorderedArray" in step:
            got = client.recv()
            assert isinstance(got, list) and matches_unordered(step["expectUnorderedArray"], got), f"{where}: got {got}"
        elif "collect" in step:
            seen = 0
            while True:
                got = client.recv()
                if matches(step["until"], got):
                    captured.record(step["until"], got)
                    break
                assert matches(step["collect"], got), f"{where}: unexpected {got}"
                seen += 1
            assert step.get("min", 0) <= seen <= step.get("max", 10**9), f"{where}: collected {seen}"
        else:
            raise AssertionError(f"unknown step {step}")
    rest = client.finish()
    assert rest == [], f"unexpected frames after the last step: {rest}"
