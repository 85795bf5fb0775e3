"""python sleep_ceiling.py [--phase-ms MS] [--loop toolwire|asyncio] [--task-per-call]

The load generator's slow-tool probe with no MCP and no second process: 64 asyncio tasks, each
awaiting `asyncio.sleep(0.01)` in a closed loop, counted as the load generator counts calls
(after half a phase unmeasured, as its slow phase).
`--loop toolwire` (the default) runs on `toolwire._loop.new_event_loop()`, the loop `server.run()`
serves on; `--loop asyncio` on asyncio's own, the Python SDK's. The share of the ideal 6,400 per
second is the most a server whose slow tool sleeps on that loop can reach on this machine.
`--task-per-call` runs each sleep as a task of its own, awaited by the worker, as a server runs
each call (its done-callback wakes the worker): what asyncio itself costs a server per call.
Prints one JSON line shaped like the load generator's `slow_tool` report, with the loop thread's
CPU per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

CONCURRENCY = 64
SLEEP_MS = 10


async def probe(phase_s: float, task_per_call: bool) -> tuple[int, float, float]:
    await closed_loop(phase_s / 2, task_per_call)
    return await closed_loop(phase_s, task_per_call)


async def closed_loop(phase_s: float, task_per_call: bool) -> tuple[int, float, float]:
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    cpu_start = time.thread_time()
    deadline = start + phase_s
    calls = 0

    async def worker() -> None:
        nonlocal calls
        while time.monotonic() < deadline:
            calls += 1
            if task_per_call:
                await loop.create_task(asyncio.sleep(SLEEP_MS / 1000))
            else:
                await asyncio.sleep(SLEEP_MS / 1000)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return calls, time.monotonic() - start, time.thread_time() - cpu_start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase-ms", type=int, default=3000)
    parser.add_argument("--loop", choices=["toolwire", "asyncio"], default="toolwire")
    parser.add_argument("--task-per-call", action="store_true")
    args = parser.parse_args()
    if args.loop == "toolwire":
        from toolwire._loop import new_event_loop

        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            calls, elapsed, cpu = runner.run(probe(args.phase_ms / 1000, args.task_per_call))
    else:
        calls, elapsed, cpu = asyncio.run(probe(args.phase_ms / 1000, args.task_per_call))
    ideal = CONCURRENCY * 1000 / SLEEP_MS
    rate = calls / elapsed
    report = {
        "runtime": ("asyncio, toolwire.new_event_loop()" if args.loop == "toolwire" else "asyncio, default loop")
        + (", a task per call" if args.task_per_call else ""),
        "slow_tool": {
            "concurrency": CONCURRENCY,
            "sleep_ms": SLEEP_MS,
            "calls_per_s": round(rate),
            "ideal_calls_per_s": ideal,
            "efficiency": round(rate / ideal, 3),
            # The loop thread's CPU per sleep (the only thread that works).
            "cpu_us_per_call": round(cpu * 1e6 / calls, 1) if calls else None,
        },
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
