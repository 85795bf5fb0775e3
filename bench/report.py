"""Turns bench/run's result files into BENCHMARKS.md (or, with --check, only validates them)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from modern_report import BEGIN, END

LABEL = {
    "toolwire-rust": "toolwire, Rust handlers",
    "toolwire-python": "toolwire, Python handlers",
    "toolwire-python-inline": "toolwire, Python handlers (echo `run_in_thread=False`)",
    "toolwire-node": "toolwire, JS handlers",
    "toolwire-node-async": "toolwire, JS handlers (async echo)",
    "toolwire-kotlin": "toolwire, Kotlin handlers",
    "rmcp": "rmcp",
    "ts-sdk": "TypeScript SDK",
    "python-sdk": "Python SDK",
    "kotlin-sdk": "Kotlin SDK",
}
ANCHORS = ["rmcp", "ts-sdk", "python-sdk", "kotlin-sdk"]
HTTP_LABEL = {
    "http-toolwire-rust": "toolwire, Rust handlers",
    "http-toolwire-rust-stateless": "toolwire, Rust handlers (stateless, JSON)",
    "http-toolwire-python": "toolwire, Python handlers",
    "http-toolwire-python-inline": "toolwire, Python handlers (echo `run_in_thread=False`)",
    "http-toolwire-node": "toolwire, JS handlers",
    "http-toolwire-kotlin": "toolwire, Kotlin handlers",
    "http-rmcp": "rmcp (stateless, JSON)",
    "http-rmcp-stateful": "rmcp (sessions, SSE)",
    "http-ts-sdk": "TypeScript SDK (sessions, JSON)",
    "http-python-sdk": "Python SDK (sessions, JSON)",
}
HTTP_ANCHORS = ["http-rmcp", "http-rmcp-stateful", "http-ts-sdk", "http-python-sdk"]
# A session per call (bench/run's `spc-` rounds: `toolwire-loadgen --http --session-per-call`).
PER_CALL_LABEL = {
    "spc-toolwire-rust": "toolwire, Rust handlers",
    "spc-toolwire-rust-abandon": "toolwire, Rust handlers, sessions never deleted",
    "spc-toolwire-rust-stateless": "toolwire, Rust handlers (stateless, JSON)",
    "spc-toolwire-python": "toolwire, Python handlers",
    "spc-toolwire-python-inline": "toolwire, Python handlers (echo `run_in_thread=False`)",
    "spc-toolwire-node": "toolwire, JS handlers",
    "spc-toolwire-kotlin": "toolwire, Kotlin handlers",
    "spc-rmcp": "rmcp (sessions, SSE)",
    "spc-rmcp-stateless": "rmcp (stateless, JSON)",
    "spc-ts-sdk": "TypeScript SDK (sessions, JSON)",
    "spc-python-sdk": "Python SDK (sessions, JSON)",
    "spc-fastmcp": "FastMCP (sessions, JSON)",
}
# Issue #54's targets on sessions/s: (toolwire server, anchor, at least this many times).
PER_CALL_TARGETS = [
    ("spc-toolwire-rust", "spc-rmcp", 1.5),
    ("spc-toolwire-rust-stateless", "spc-rmcp-stateless", 1.5),
    ("spc-toolwire-python", "spc-fastmcp", 10.0),
    ("spc-toolwire-python", "spc-python-sdk", 10.0),
    ("spc-toolwire-python-inline", "spc-fastmcp", 10.0),
    ("spc-toolwire-node", "spc-ts-sdk", 5.0),
]
# Memory flat: resident memory after the timed phase at most this much above before it.
FLAT_RSS = 1.10


def per_call_table(results: dict[str, list[dict]]) -> list[str]:
    """Sessions/s, CPU, latency and memory of each server on the session-per-call shape, and
    issue #54's targets on it."""
    servers = [s for s in PER_CALL_LABEL if s in results]
    if not servers:
        return []

    def median(name: str, get: Callable[[dict], float]) -> float:
        return statistics.median(get(r) for r in results[name])

    rate = {s: median(s, lambda r: r["sessions"]["calls_per_s"]) for s in servers}
    growth = {s: median(s, lambda r: r["rss_kib_after"] / max(r["rss_kib_before"], 1)) for s in servers}
    rows = []
    for s in servers:
        rows.append(
            f"| {PER_CALL_LABEL[s]} | {fmt(rate[s], 0)} "
            f"| {fmt(median(s, lambda r: r['server_cpu_us_per_session']), 0)} "
            f"| {median(s, lambda r: r['sessions']['p50_us']) / 1000:.1f} "
            f"| {median(s, lambda r: r['sessions']['p99_us']) / 1000:.1f} "
            f"| {fmt(median(s, lambda r: r['rss_kib_before']), 0)} | {fmt(median(s, lambda r: r['rss_kib_after']), 0)} "
            f"| {growth[s]:.2f}× |"
        )
    targets = []
    for ours, anchor, goal in PER_CALL_TARGETS:
        if ours in rate and anchor in rate:
            value = rate[ours] / rate[anchor]
            verdict = "met" if value >= goal else "**missed**"
            targets.append(
                f"| {PER_CALL_LABEL[ours]} | sessions/s | {fmt(rate[ours], 0)} | {PER_CALL_LABEL[anchor]} "
                f"| {fmt(rate[anchor], 0)} | {value:.2f}× | ≥ {goal:g}× | {verdict} |"
            )
    for s in servers:
        if s.startswith("spc-toolwire"):
            verdict = "met" if growth[s] <= FLAT_RSS else "**missed**"
            targets.append(
                f"| {PER_CALL_LABEL[s]} | RSS after / before the phase | {growth[s]:.2f}× | | | "
                f"| ≤ {FLAT_RSS:.2f}× | {verdict} |"
            )
    return [
        "",
        "## A session per call (medians)",
        "",
        'The shape of TM Dev Lab\'s public comparison ("benchmark-mcp-servers-v2"): 50 clients, each',
        "opening a session for every call on its keep-alive connection (`initialize`,",
        '`notifications/initialized`, one verified `echo`, then `DELETE`; "never deleted": the',
        "session is left, as clients that just stop leave it). One process per server; CPU and",
        "memory over its process tree; RSS before is taken after 20 warm-up sessions per client",
        "(`toolwire-loadgen --http --session-per-call [--abandon] --clients 50`). toolwire reclaims",
        "sessions a client never deletes by `max_sessions_per_client` (1,000: the client's least",
        "recently used idle session makes room for its new one; every client here is 127.0.0.1)",
        "and the idle timeout (1 hour). Targets (issue #54) weigh each of rmcp's modes against toolwire",
        "in the same mode.",
        "",
        "| server | sessions/s | server CPU per session, µs | session p50, ms | session p99, ms "
        "| RSS before, KiB | RSS after, KiB | after / before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "| toolwire server | metric | toolwire | anchor | anchor's | ratio | target | |",
        "|---|---|---:|---|---:|---:|---|---|",
        *targets,
    ]


# The slow-tool probe without MCP (bench/ceiling): per runtime, the toolwire server and the SDK
# anchor whose slow tool sleeps on it (None where neither does).
CEILINGS: list[tuple[str, str, str | None, str | None]] = [
    ("ceiling-rust", "tokio, current-thread runtime", "toolwire-rust", None),
    ("ceiling-rust-multi", "tokio, multi-thread runtime", None, "rmcp"),
    ("ceiling-python", "asyncio, `toolwire._loop.new_event_loop()`", "toolwire-python", None),
    ("ceiling-python-asyncio", "asyncio, its default loop", None, "python-sdk"),
    ("ceiling-node", "Node timers (`node:timers/promises`)", "toolwire-node", "ts-sdk"),
    ("ceiling-kotlin", "kotlinx.coroutines `delay`, `Dispatchers.Default`", "toolwire-kotlin", "kotlin-sdk"),
]
# The transports with no MCP behind them (bench/loadgen/src/bare.rs): each toolwire server's
# echo figures as a share of its transport's, with the targets the Rust handlers must meet.
STDIO_CEILING = "ceiling-stdio"
HTTP_CEILING = "http-ceiling"
SHARE_TARGETS = {"toolwire-rust": 0.70, "http-toolwire-rust": 0.60, "http-toolwire-rust-stateless": 0.60}
HTTP_METRICS: dict[str, tuple[str, Callable[[dict], float], int]] = {
    "calls": ("calls/s, 64 clients", lambda r: r["concurrent"]["calls_per_s"], 0),
    "cpu": ("server CPU per call, µs", lambda r: r["concurrent"]["server_cpu_us_per_call"], 2),
    "client": ("load generator CPU per call, µs", lambda r: r["concurrent"]["client_cpu_us_per_call"], 2),
    "seq": ("one client: calls/s", lambda r: r["sequential"]["calls_per_s"], 0),
    "p50": ("one client: p50, µs", lambda r: r["sequential"]["p50_us"], 1),
    "p99": ("one client: p99, µs", lambda r: r["sequential"]["p99_us"], 1),
    "rss": ("peak RSS, KiB", lambda r: r["peak_rss_kib"], 0),
}


def load(folder: Path) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        if "error" in data:
            sys.exit(f"{path.name}: the run failed: {data['error']}")
        if data.get("errors", 0) != 0:
            sys.exit(f"{path.name}: {data['errors']} errors")
        results.setdefault(path.stem.rsplit("-", 1)[0], []).append(data)
    return results


def version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "?"


def java_version() -> str:
    # `java -version` writes to stderr.
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True)
        return done.stderr.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "java ?"


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({model}), {mem:.0f} GiB, Linux {platform.release()}"


METRICS: dict[str, tuple[str, Callable[[dict], float], int]] = {
    "pipe": ("pipelined calls/s (64 in flight)", lambda r: r["pipelined"]["calls_per_s"], 0),
    "seq": ("sequential calls/s", lambda r: r["sequential"]["calls_per_s"], 0),
    "seq1": ("sequential calls/s, both on one core", lambda r: r["sequential"]["calls_per_s"], 0),
    "p50": ("sequential p50, µs", lambda r: r["sequential"]["p50_us"], 1),
    "p99": ("sequential p99, µs", lambda r: r["sequential"]["p99_us"], 1),
    "cpu": ("server CPU per call, µs", lambda r: r["pipelined"]["server_cpu_us_per_call"], 2),
    "client": ("load generator CPU per call, µs", lambda r: r["pipelined"]["client_cpu_us_per_call"], 2),
    "list": ("tools/list p50, µs", lambda r: r["tools_list"]["p50_us"], 1),
    # Absent from runs made before the load generator measured it.
    "listcpu": (
        "tools/list: server CPU per list, µs",
        lambda r: r["tools_list"].get("server_cpu_us_per_list", float("nan")),
        1,
    ),
    "slow": ("slow tool, share of ideal", lambda r: r["slow_tool"]["efficiency"], 3),
    "rss": ("peak RSS, KiB", lambda r: r["peak_rss_kib"], 0),
    "anon": ("  of it anonymous (heap, stacks), KiB", lambda r: r["rss_anon_kib"], 0),
    "file": ("  of it file-backed (code), KiB", lambda r: r["rss_file_kib"], 0),
}


def fmt(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


def figures_table(servers: list[str], labels: dict, metrics: dict, medians: dict) -> list[str]:
    """A table of every metric (rows) for every server (columns), medians as given."""
    lines = [
        "| metric | " + " | ".join(labels[s] for s in servers) + " |",
        "|---|" + "---:|" * len(servers),
    ]
    for key, (title, _, digits) in metrics.items():
        lines.append(f"| {title} | " + " | ".join(fmt(medians[s][key], digits) for s in servers) + " |")
    return lines


def ceilings_table(results: dict[str, list[dict]], med: dict) -> list[str]:
    """Each runtime's own slow-tool share beside the servers whose slow tool sleeps on it."""

    def beside(server: str | None, ceiling: float) -> str:
        if server is None or server not in med:
            return "| | "
        share = med[server]["slow"]
        return f"| {LABEL[server]}: {share:.3f} | {share / ceiling:.2f} "

    rows = []
    for name, runtime, ours, anchor in CEILINGS:
        if name not in results:
            continue
        ceiling = statistics.median(r["slow_tool"]["efficiency"] for r in results[name])
        rows.append(f"| {runtime} | {ceiling:.3f} {beside(ours, ceiling)}{beside(anchor, ceiling)}|")
    if not rows:
        return []
    return [
        "",
        "## Slow tool: each runtime's own ceiling (medians)",
        "",
        "The slow-tool probe with no MCP and no second process (`bench/ceiling`): 64 tasks of the",
        "runtime, each sleeping 10 ms in a closed loop, counted as the load generator counts calls",
        "(after half a phase unmeasured, as the servers' slow phase). Its share of the ideal 6,400",
        "per second is the most a server whose slow tool sleeps on that runtime can reach on this",
        "machine; each server's share is then divided by it.",
        "",
        "| runtime (one process, no MCP) | share of ideal | toolwire server | of the ceiling "
        "| SDK on it | of the ceiling |",
        "|---|---:|---|---:|---|---:|",
        *rows,
    ]


def shares_table(results: dict[str, list[dict]]) -> list[str]:
    """Each toolwire server's echo calls/s and CPU per call beside its transport's ceiling."""

    def median(name: str, phase: str, key: str) -> float:
        return statistics.median(r[phase][key] for r in results[name])

    rows = []
    for ceiling, phase, transport, labels in (
        (STDIO_CEILING, "pipelined", "stdio, 64 in flight", LABEL),
        (HTTP_CEILING, "concurrent", "HTTP, 64 clients", HTTP_LABEL),
    ):
        if ceiling not in results:
            continue
        top = median(ceiling, phase, "calls_per_s")
        top_cpu = median(ceiling, phase, "server_cpu_us_per_call")
        top_seq = median(ceiling, "sequential", "calls_per_s")
        rows.append(
            f"| no MCP (the ceiling) | {transport} | {fmt(top, 0)} | 1.00 | {top_cpu:.2f} | 1.00 "
            f"| {fmt(top_seq, 0)} | 1.00 | | |"
        )
        for server, label in labels.items():
            if server not in results or server in ANCHORS or server in HTTP_ANCHORS:
                continue
            calls = median(server, phase, "calls_per_s")
            cpu = median(server, phase, "server_cpu_us_per_call")
            seq = median(server, "sequential", "calls_per_s")
            goal = SHARE_TARGETS.get(server)
            verdict = "" if goal is None else ("met" if calls / top >= goal else "**missed**")
            rows.append(
                f"| {label} | {transport} | {fmt(calls, 0)} | {calls / top:.2f} | {cpu:.2f} | {cpu / top_cpu:.1f}× "
                f"| {fmt(seq, 0)} | {seq / top_seq:.2f} | {'' if goal is None else f'≥ {goal:.2f}'} | {verdict} |"
            )
    if not rows:
        return []
    return [
        "",
        "## Ceilings: each transport with no MCP behind it (medians)",
        "",
        "The same load generator, in the same rounds, against a process that does no MCP: it answers",
        "the load generator's initialize and `echo` requests with the bytes toolwire sends, found by",
        "scanning for the id and the text instead of parsing JSON (`toolwire-loadgen --serve-bare-stdio`:",
        "blocking reads and writes on one thread; `--serve-bare-http PORT`: hyper's HTTP/1.1 server",
        "with toolwire's connection options on the Rust demo's multi-thread runtime). Share: the",
        "server's calls/s over the ceiling's (the target is on the busy phase: 64 calls in flight on",
        "stdio, 64 clients over HTTP); CPU per call: the server's over the ceiling's.",
        "",
        "| server | transport | calls/s | share | server CPU per call, µs | × the ceiling's "
        "| one at a time: calls/s | share | target | |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
        *rows,
    ]


def write(results: dict[str, list[dict]], target: Path, command: str, started: str) -> None:
    servers = [s for s in LABEL if s in results]
    http_servers = [s for s in HTTP_LABEL if s in results]
    hmed = {
        s: {k: statistics.median(get(r) for r in results[s]) for k, (_, get, _) in HTTP_METRICS.items()}
        for s in http_servers
    }
    med = {
        s: {k: statistics.median(get(r) for r in results[s]) for k, (_, get, _) in METRICS.items() if k != "seq1"}
        for s in servers
    }
    # The one-core pass: the same sequential phase with both processes pinned to one core.
    for s in servers:
        onecore = results.get(f"onecore-{s}", [])
        med[s]["seq1"] = statistics.median(r["sequential"]["calls_per_s"] for r in onecore) if onecore else float("nan")
    inflight = results.get("inflight-toolwire-rust", [])
    per_call = statistics.median(r["inflight"]["bytes_per_call"] for r in inflight) if inflight else float("nan")

    rows: list[str] = []

    def ratio_row(
        label: str,
        title: str,
        mine: float,
        anchor_label: str,
        theirs: float,
        digits: int,
        goal: str,
        ok: Callable[[float], bool],
    ) -> None:
        value = mine / theirs
        verdict = "met" if ok(value) else "**missed**"
        rows.append(
            f"| {label} | {title} | {fmt(mine, digits)} | {anchor_label} | {fmt(theirs, digits)} "
            f"| {value:.2f}× | {goal} | {verdict} |"
        )

    def ratio(server: str, metric: str, anchor: str, goal: str, ok: Callable[[float], bool]) -> None:
        if server not in med or anchor not in med:
            return
        title, _, digits = METRICS[metric]
        ratio_row(LABEL[server], title, med[server][metric], LABEL[anchor], med[anchor][metric], digits, goal, ok)

    def absolute(server: str, metric: str, goal: str, ok: Callable[[float], bool], value: float | None = None) -> None:
        if server not in med and value is None:
            return
        title, _, digits = METRICS.get(metric, (metric, None, 0))
        mine = med[server][metric] if value is None else value
        verdict = "met" if ok(mine) else "**missed**"
        rows.append(f"| {LABEL[server]} | {title} | {fmt(mine, digits)} | | | | {goal} | {verdict} |")

    def http_ratio(
        metric: str, anchor: str, goal: str, ok: Callable[[float], bool], server: str = "http-toolwire-rust"
    ) -> None:
        if server not in hmed or anchor not in hmed:
            return
        title, _, digits = HTTP_METRICS[metric]
        ratio_row(
            f"{HTTP_LABEL[server]}, HTTP",
            title,
            hmed[server][metric],
            HTTP_LABEL[anchor],
            hmed[anchor][metric],
            digits,
            goal,
            ok,
        )

    ratio("toolwire-rust", "pipe", "rmcp", "≥ 10×", lambda v: v >= 10)
    ratio("toolwire-rust", "pipe", "ts-sdk", "≥ 4×", lambda v: v >= 4)
    absolute("toolwire-rust", "p50", "≤ 25 µs", lambda v: v <= 25)
    absolute("toolwire-rust", "cpu", "≤ 5 µs", lambda v: v <= 5)
    ratio("toolwire-rust", "list", "rmcp", "≤ 0.25×", lambda v: v <= 0.25)
    absolute("toolwire-rust", "slow", "≥ 0.90", lambda v: v >= 0.90)
    ratio("toolwire-rust", "rss", "rmcp", "≤ 1×", lambda v: v <= 1)
    absolute(
        "toolwire-rust", "memory per call, 10,000 calls in flight, bytes", "≤ 10,240", lambda v: v <= 10240, per_call
    )
    ratio("toolwire-python", "pipe", "python-sdk", "≥ 10×", lambda v: v >= 10)
    ratio("toolwire-python", "seq", "python-sdk", "≥ 5×", lambda v: v >= 5)
    ratio("toolwire-python", "seq1", "python-sdk", "≥ 5×", lambda v: v >= 5)
    absolute("toolwire-python", "slow", "≥ 0.90", lambda v: v >= 0.90)
    ratio("toolwire-python", "rss", "python-sdk", "≤ 1×", lambda v: v <= 1)
    ratio("toolwire-node", "pipe", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-node", "seq", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-node", "seq1", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    absolute("toolwire-node", "slow", "≥ 0.90", lambda v: v >= 0.90)
    ratio("toolwire-node", "rss", "ts-sdk", "≤ 1×", lambda v: v <= 1)
    ratio("toolwire-node-async", "pipe", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-node-async", "seq", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-node-async", "seq1", "ts-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-kotlin", "pipe", "kotlin-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-kotlin", "seq", "kotlin-sdk", "≥ 2×", lambda v: v >= 2)
    ratio("toolwire-kotlin", "seq1", "kotlin-sdk", "≥ 2×", lambda v: v >= 2)
    absolute("toolwire-kotlin", "slow", "≥ 0.90", lambda v: v >= 0.90)
    ratio("toolwire-kotlin", "rss", "kotlin-sdk", "≤ 1×", lambda v: v <= 1)
    # rmcp's best mode is whichever of its two gives more calls/s (and, for CPU, uses less).
    rmcp_modes = [m for m in ("http-rmcp", "http-rmcp-stateful") if m in hmed]
    if rmcp_modes:
        best = max(rmcp_modes, key=lambda m: hmed[m]["calls"])
        leanest = min(rmcp_modes, key=lambda m: hmed[m]["cpu"])
        http_ratio("calls", best, "≥ 2×", lambda v: v >= 2)
        http_ratio("calls", "http-ts-sdk", "≥ 5×", lambda v: v >= 5)
        http_ratio("cpu", leanest, "≤ 0.33×", lambda v: v <= 1 / 3)
    # The same targets mode for mode: each server stateless, answering with JSON.
    like = "http-toolwire-rust-stateless"
    http_ratio("calls", "http-rmcp", "≥ 2×", lambda v: v >= 2, like)
    http_ratio("cpu", "http-rmcp", "≤ 0.33×", lambda v: v <= 1 / 3, like)

    lines = [
        "# Benchmarks",
        "",
        "End-to-end over stdio (and Streamable HTTP, below): the load generator (`bench/loadgen`)",
        "spawns each server, performs the handshake, and runs timed phases, verifying every answer",
        "(id and content; any error fails the run). Servers run one after another in rotating order;",
        "each figure is the median of the rounds; each round's figures are kept in",
        "`.cache/bench/<date>/`. The load generator and the server",
        "run on a core each; a second, sequential-only pass pins both to one core (see the notes).",
        "Every server exposes `echo`, a `sleep` tool and 100 extra tools.",
        "",
        f"Command: `{command}`  ",
        f"Date: {started}  ",
        f"Machine: {machine()}  ",
        f"Rounds: {len(results[servers[0]])}",
        "",
        "## Targets",
        "",
        "| toolwire server | metric | toolwire | anchor | anchor's | ratio | target | |",
        "|---|---|---:|---|---:|---:|---|---|",
        *rows,
        "",
        "## All figures (medians)",
        "",
        *figures_table(servers, LABEL, METRICS, med),
    ]
    lines += ceilings_table(results, med)
    lines += shares_table(results)
    if http_servers:
        lines += [
            "",
            "## Streamable HTTP (medians)",
            "",
            "64 clients, each its own session (where the server keeps sessions) on its own keep-alive",
            "connection with TCP_NODELAY, calling `echo` in a closed loop; then one client alone for",
            "latency. Each server process is spawned with a free port (`toolwire-loadgen --http`).",
            "",
            *figures_table(http_servers, HTTP_LABEL, HTTP_METRICS, hmed),
        ]
    lines += per_call_table(results)
    lines += [
        "",
        "Versions: "
        + ", ".join(
            [
                "toolwire 0.1.0",
                "rmcp 3.9.0",
                "@modelcontextprotocol/sdk 1.32.2 (zod 4.6.7)",
                "mcp 2.3.0 (Python)",
                "fastmcp 4.2.3",
                "io.modelcontextprotocol:kotlin-sdk-server-jvm 0.16.0",
                version(["rustc", "--version"]),
                f"node {version(['node', '--version'])}",
                version([sys.executable, "--version"]),
                java_version(),
            ]
        ),
        "",
    ]
    notes = Path(__file__).with_name("NOTES.md")
    if notes.exists():
        lines.append(keep_modern(notes.read_text(), target).rstrip() + "\n")
    target.write_text("\n".join(lines))
    print(f"wrote {target}")


# The sections other scripts write into BENCHMARKS.md in place, each between two marker lines:
# bench/modern's (2026-07-28) and bench/mounts/run's (mounted in a web app).
MOUNTS_BEGIN, MOUNTS_END = "<!-- bench/mounts: begin -->", "<!-- bench/mounts: end -->"
KEPT_SECTIONS = ((BEGIN, END), (MOUNTS_BEGIN, MOUNTS_END))


def keep_modern(notes: str, target: Path) -> str:
    """The notes with the sections bench/modern and bench/mounts/run last wrote into target,
    where it has them.

    Those scripts replace their section, between its two marker lines, in place; the notes hold
    the markers where the section goes (and a copy of it, for a target without one).
    """
    old = target.read_text() if target.exists() else ""
    for begin, end in KEPT_SECTIONS:
        if not all(marker in notes and marker in old for marker in (begin, end)):
            continue
        head, rest = notes.split(begin, 1)
        _, tail = rest.split(end, 1)
        section = old.split(begin, 1)[1].split(end, 1)[0]
        notes = head + begin + section + end + tail
    return notes


def run_started(folder: Path) -> str:
    """When the run began: bench/run names its folder after that moment (UTC)."""
    try:
        started = datetime.strptime(folder.resolve().name, "%Y%m%d-%H%M%S")
    except ValueError:
        return f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} (report written)"
    return started.strftime("%Y-%m-%d %H:%M UTC (run started)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--check", action="store_true", help="only validate the results")
    parser.add_argument("--write", type=Path, help="write the report here")
    parser.add_argument("--command", default="bench/run")
    parser.add_argument("--shares", action="store_true", help="print only the ceilings' table (a partial run)")
    args = parser.parse_args()
    results = load(args.folder)
    if args.shares:
        print("\n".join(shares_table(results) + per_call_table(results)))
        return
    required = [
        "toolwire-rust",
        *ANCHORS,
        "http-toolwire-rust",
        *HTTP_ANCHORS,
        *(c[0] for c in CEILINGS),
        STDIO_CEILING,
        HTTP_CEILING,
        *PER_CALL_LABEL,
    ]
    missing = [n for n in required if n not in results]
    if missing:
        sys.exit(f"no results for {', '.join(missing)}")
    if args.check:
        total = sum(len(v) for v in results.values())
        print(f"bench smoke: {total} runs, every answer verified, 0 errors")
        return
    write(results, args.write, args.command, run_started(args.folder))


if __name__ == "__main__":
    main()
