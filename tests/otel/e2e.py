"""End to end: the Rust demo exports its request spans over OTLP/HTTP to a real OpenTelemetry
Collector (tests/otel/collector), and the spans the collector wrote continue the caller's trace.

Starts the collector (writing what it receives to a file), the demo on Streamable HTTP with
`--otlp`, and drives the demo with plain HTTP: a 2025-11-25 session whose call names its trace
in `_meta`, a stateless call naming it in the `traceparent` header, a 2026-07-28 call, and a
call of an unknown tool. Then it stops the demo (SIGTERM: the spans are flushed), stops the
collector (SIGTERM: its file is flushed) and checks each span's trace, parent, kind, name,
attributes, status and the service's name.

Usage: python3 tests/otel/e2e.py   (exit 0 when every check passes)
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A release build, or the one in TOOLWIRE_RUST_BIN_DIR (scripts/lib.sh; scripts/test-all: its debug build).
DEMO = Path(os.environ.get("TOOLWIRE_RUST_BIN_DIR") or ROOT / "target/release") / "toolwire-demo"
TRACE = "0af7651916cd43dd8448eb211c80319c"
META_PARENT = "b7ad6b7169203331"
HEADER_PARENT = "00f067aa0ba902b7"
MODERN_PARENT = "53995c3f42cd8ad8"
UNKNOWN_PARENT = "a3ce929d0e0e4736"


def started(command: list[str], pattern: str, name: str) -> tuple[subprocess.Popen[str], re.Match[str]]:
    """Starts `command` and waits (up to 120 s) for the stderr line that says where it listens;
    stderr is drained afterwards so the process never blocks on it."""
    process = subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    found: list[re.Match[str]] = []
    ready = threading.Event()
    lines: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if not found and (match := re.search(pattern, line)):
                found.append(match)
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(120) or not found:
        process.kill()
        sys.exit(f"e2e: {name} did not start:\n{''.join(lines)}")
    return process, found[0]


def post(url: str, message: dict, headers: dict[str, str]) -> tuple[dict[str, str], dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream", **headers},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        body = reply.read().decode()
        reply_headers = {k.lower(): v for k, v in reply.headers.items()}
    if reply_headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        return reply_headers, json.loads(data[-1])
    return reply_headers, json.loads(body) if body else {}


def stop(process: subprocess.Popen[str], name: str) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        sys.exit(f"e2e: {name} did not stop on SIGTERM")
    if code != 0:
        sys.exit(f"e2e: {name} exited {code}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "spans.jsonl"
        collector, where = started(
            [str(ROOT / "tests/otel/collector/run"), str(out)],
            r"otelcol: listening on (http://127\.0\.0\.1:\d+)",
            "the collector",
        )
        try:
            demo, listening = started(
                [str(DEMO), "--http", "0", "--otlp", where.group(1)],
                r"listening on (http://\S+/mcp)",
                "the demo",
            )
            url = listening.group(1)
            try:
                drive(url)
            finally:
                stop(demo, "the demo")
        finally:
            stop(collector, "the collector")
        check([json.loads(line) for line in out.read_text().splitlines() if line.strip()])


def drive(url: str) -> None:
    # A 2025-11-25 session; its call names the caller's span in `_meta`.
    headers, init = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"},
            },
        },
        {},
    )
    assert init["result"]["protocolVersion"] == "2025-11-25", init
    session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _, echoed = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": "traced"},
                "_meta": {"traceparent": f"00-{TRACE}-{META_PARENT}-01"},
            },
        },
        session,
    )
    assert echoed["result"]["content"][0]["text"] == "traced", echoed
    # The HTTP header instead of `_meta`.
    _, added = post(
        url,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}},
        {**session, "traceparent": f"00-{TRACE}-{HEADER_PARENT}-01"},
    )
    assert "5" in json.dumps(added["result"]), added
    # An unknown tool: the span says the error.
    _, unknown = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "nope", "arguments": {}, "_meta": {"traceparent": f"00-{TRACE}-{UNKNOWN_PARENT}-01"}},
        },
        session,
    )
    assert unknown["error"]["code"] == -32602, unknown
    # 2026-07-28: no session; the trace in `_meta` with the request's other keys.
    _, modern = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": "modern"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "traceparent": f"00-{TRACE}-{MODERN_PARENT}-01",
                },
            },
        },
        {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"},
    )
    assert modern["result"]["content"][0]["text"] == "modern", modern


def attributes(span: dict) -> dict[str, object]:
    return {kv["key"]: next(iter(kv["value"].values()), None) for kv in span.get("attributes", [])}


def check(requests: list[dict]) -> None:
    spans = []
    for request in requests:
        for resource in request.get("resourceSpans", []):
            service = attributes(resource.get("resource", {})).get("service.name")
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    spans.append((service, span))
    by_parent = {span.get("parentSpanId"): (service, span) for service, span in spans if span.get("traceId") == TRACE}

    def the(parent: str, name: str, tool: str, outcome: str) -> dict:
        service, span = by_parent.get(parent, (None, None))
        assert span is not None, f"no span of trace {TRACE} with parent {parent}: {[s.get('name') for _, s in spans]}"
        assert service == "toolwire-demo", service
        assert span["name"] == name, span["name"]
        assert span["kind"] in (2, "SPAN_KIND_SERVER"), span["kind"]
        found = attributes(span)
        for key, want in (
            ("rpc.system", "jsonrpc"),
            ("rpc.method", "tools/call"),
            ("mcp.tool.name", tool),
            ("mcp.outcome", outcome),
        ):
            assert found.get(key) == want, f"{name}: {key} is {found.get(key)!r}, not {want!r}: {found}"
        return span

    the(META_PARENT, "tools/call echo", "echo", "result")
    the(HEADER_PARENT, "tools/call add", "add", "result")
    the(MODERN_PARENT, "tools/call echo", "echo", "result")
    failed = [s for _, s in spans if s.get("name") == "tools/call nope"]
    assert len(failed) == 1, failed
    assert failed[0]["traceId"] == TRACE and failed[0]["parentSpanId"] == UNKNOWN_PARENT
    assert attributes(failed[0]).get("rpc.jsonrpc.error_code") in (-32602, "-32602"), attributes(failed[0])
    assert failed[0].get("status", {}).get("code") in (2, "STATUS_CODE_ERROR"), failed[0].get("status")
    initialize = [s for _, s in spans if s.get("name") == "initialize"]
    assert len(initialize) == 1 and initialize[0]["traceId"] != TRACE and not initialize[0].get("parentSpanId")
    print(f"e2e: {len(spans)} spans from the collector; parentage, names, attributes and status as sent: PASS")


if __name__ == "__main__":
    main()
