"""python sleep_ceiling.py [--phase-ms MS] [--loop toolwire|asyncio]

The load generator's slow-tool probe with no MCP and no second process: 64 asyncio tasks, each
awaiting `asyncio.sleep(0.01)` in a closed loop, counted as the load generator counts calls.
`--loop toolwire` (the default) runs on `toolwire.new_event_loop()`, the loop `server.run()`
serves on; `--loop asyncio` on asyncio's own, the Python SDK's. The share of the ideal 6,400 per
second is the most a server whose slow tool sleeps on that loop can reach on this machine.
Prints one JSON line shaped like the load generator's `slow_tool` report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

CONCURRENCY = 64
SLEEP_MS = 10


async def probe(phase_s: float) -> tuple[int, float]:
    start = time.monotonic()
    deadline = start + phase_s
    calls = 0

    async def worker() -> None:
        nonlocal calls
        while time.monotonic() < deadline:
            calls += 1
            await asyncio.sleep(SLEEP_MS / 1000)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return calls, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase-ms", type=int, default=3000)
    parser.add_argument("--loop", choices=["toolwire", "asyncio"], default="toolwire")
    args = parser.parse_args()
    if args.loop == "toolwire":
        import toolwire

        with asyncio.Runner(loop_factory=toolwire.new_event_loop) as runner:
            calls, elapsed = runner.run(probe(args.phase_ms / 1000))
    else:
        calls, elapsed = asyncio.run(probe(args.phase_ms / 1000))
    ideal = CONCURRENCY * 1000 / SLEEP_MS
    rate = calls / elapsed
    report = {
        "runtime": "asyncio, toolwire.new_event_loop()" if args.loop == "toolwire" else "asyncio, default loop",
        "slow_tool": {
            "concurrency": CONCURRENCY,
            "sleep_ms": SLEEP_MS,
            "calls_per_s": round(rate),
            "ideal_calls_per_s": ideal,
            "efficiency": round(rate / ideal, 3),
        },
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
