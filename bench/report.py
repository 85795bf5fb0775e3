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

SERVERS = ["toolwire-rust", "rmcp", "ts-sdk", "python-sdk"]
LABEL = {"toolwire-rust": "toolwire (Rust handlers)", "rmcp": "rmcp", "ts-sdk": "TypeScript SDK", "python-sdk": "Python SDK"}


def load(folder: Path) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        if "error" in data:
            sys.exit(f"{path.name}: the run failed: {data['error']}")
        if data.get("errors", 0) != 0:
            sys.exit(f"{path.name}: {data['errors']} errors")
        name = path.stem.rsplit("-", 1)[0]
        results.setdefault(name, []).append(data)
    return results


def median(runs: list[dict], *keys: str) -> float:
    values = []
    for run in runs:
        value = run
        for key in keys:
            value = value[key]
        values.append(value)
    return statistics.median(values)


def version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "?"


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


def fmt(value: float, digits: int = 0) -> str:
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def write(results: dict[str, list[dict]], target: Path, command: str) -> None:
    for name in SERVERS:
        if name not in results:
            sys.exit(f"no results for {name}")
    m = {name: results[name] for name in SERVERS}
    tw, rm, ts, py = (m[n] for n in SERVERS)
    pipe = {n: median(m[n], "pipelined", "calls_per_s") for n in SERVERS}
    seq = {n: median(m[n], "sequential", "calls_per_s") for n in SERVERS}
    p50 = {n: median(m[n], "sequential", "p50_us") for n in SERVERS}
    p99 = {n: median(m[n], "sequential", "p99_us") for n in SERVERS}
    cpu = {n: median(m[n], "pipelined", "server_cpu_us_per_call") for n in SERVERS}
    client = {n: median(m[n], "pipelined", "client_cpu_us_per_call") for n in SERVERS}
    lst = {n: median(m[n], "tools_list", "p50_us") for n in SERVERS}
    slow = {n: median(m[n], "slow_tool", "efficiency") for n in SERVERS}
    rss = {n: median(m[n], "peak_rss_kib") for n in SERVERS}
    inflight = results.get("inflight-toolwire-rust", [])
    per_call = median(inflight, "inflight", "bytes_per_call") if inflight else float("nan")

    def check(ok: bool) -> str:
        return "met" if ok else "**missed**"

    rows = [
        ("pipelined calls/s (64 in flight)", pipe, 0, f"{pipe['toolwire-rust'] / pipe['rmcp']:.1f}× rmcp, {pipe['toolwire-rust'] / pipe['ts-sdk']:.1f}× TS",
         "≥ 10× rmcp, ≥ 4× TS", check(pipe["toolwire-rust"] >= 10 * pipe["rmcp"] and pipe["toolwire-rust"] >= 4 * pipe["ts-sdk"])),
        ("sequential calls/s", seq, 0, f"{seq['toolwire-rust'] / seq['rmcp']:.1f}× rmcp, {seq['toolwire-rust'] / seq['ts-sdk']:.1f}× TS", "", ""),
        ("sequential p50 latency, µs", p50, 1, f"{p50['toolwire-rust']:.1f} µs", "≤ 25 µs", check(p50["toolwire-rust"] <= 25)),
        ("sequential p99 latency, µs", p99, 1, "", "", ""),
        ("server CPU per call, µs (pipelined)", cpu, 2, f"{cpu['toolwire-rust'] / cpu['rmcp']:.2f}× rmcp", "≤ 5 µs", check(cpu["toolwire-rust"] <= 5)),
        ("load generator CPU per call, µs", client, 2, "", "(the client's own cost)", ""),
        ("tools/list p50 (102+ tools), µs", lst, 1, f"{lst['toolwire-rust'] / lst['rmcp']:.2f}× rmcp", "≤ 0.25× rmcp", check(lst["toolwire-rust"] <= 0.25 * lst["rmcp"])),
        ("slow tool (10 ms, 64 concurrent), share of ideal", slow, 3, f"{slow['toolwire-rust']:.3f}", "≥ 0.90", check(slow["toolwire-rust"] >= 0.90)),
        ("peak RSS, KiB", rss, 0, f"{rss['toolwire-rust'] / rss['rmcp']:.2f}× rmcp", "≤ 1× anchor", check(rss["toolwire-rust"] <= rss["rmcp"])),
    ]
    lines = [
        "# Benchmarks",
        "",
        "End-to-end over stdio: the load generator (`bench/loadgen`) spawns each server, performs the",
        "handshake, and runs timed phases, verifying every answer (id and content; any error fails the",
        "run). Servers run one after another in rotating order; each figure is the median of the rounds.",
        "All servers expose `echo`, a `sleep` tool and 100 extra tools. Ratios compare toolwire with",
        "the anchor its target names.",
        "",
        f"Command: `{command}`  ",
        f"Date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}  ",
        f"Machine: {machine()}  ",
        f"Rounds: {len(tw)}",
        "",
        "| metric | " + " | ".join(LABEL[n] for n in SERVERS) + " | toolwire vs anchor | target | |",
        "|---|" + "---:|" * len(SERVERS) + "---|---|---|",
    ]
    for title, values, digits, ratio, goal, verdict in rows:
        lines.append(f"| {title} | " + " | ".join(fmt(values[n], digits) for n in SERVERS) + f" | {ratio} | {goal} | {verdict} |")
    lines.append(
        f"| memory per call with 10,000 calls in flight, bytes | {fmt(per_call)} | | | | | ≤ 10,240 | {check(per_call <= 10240)} |"
    )
    lines += [
        "",
        "Versions: " + ", ".join([
            f"toolwire {version(['cargo', 'pkgid', '-p', 'toolwire']).rsplit('@', 1)[-1].rsplit('#', 1)[-1]}",
            "rmcp 3.9.0",
            "@modelcontextprotocol/sdk 1.32.2 (zod 4.6.7)",
            "mcp 2.3.0 (Python)",
            version(["rustc", "--version"]),
            f"node {version(['node', '--version'])}",
            version([sys.executable, "--version"]),
        ]),
        "",
    ]
    notes = Path(__file__).with_name("NOTES.md")
    if notes.exists():
        lines.append(notes.read_text().rstrip() + "\n")
    target.write_text("\n".join(lines))
    print(f"wrote {target}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--check", action="store_true", help="only validate the results")
    parser.add_argument("--write", type=Path, help="write the report here")
    parser.add_argument("--command", default="bench/run")
    args = parser.parse_args()
    results = load(args.folder)
    missing = [n for n in SERVERS if n not in results]
    if missing:
        sys.exit(f"no results for {', '.join(missing)}")
    if args.check:
        total = sum(len(v) for v in results.values())
        print(f"bench smoke: {total} runs, every answer verified, 0 errors")
        return
    write(results, args.write, args.command)


if __name__ == "__main__":
    main()
