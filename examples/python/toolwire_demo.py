"""The demo server of the shared contract, with Python handlers: echo, add, sleep, fail.

Run it with `examples/run-demo python [--extra-tools N] [--http PORT]` (`--conformance` serves the
conformance suite's tools, resources and prompts instead; `--redis URL` and `--request-state-key
SECRET`, repeatable, make it one replica of several behind a load balancer; `--inline-echo`
registers echo with `run_in_thread=False`). The schemas are spelled out (not derived from type
hints) so that every language's demo lists exactly the same tools.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Optional

from toolwire import Context, Server, TransportError

INSTRUCTIONS = "Demo server: echo text, add two numbers, sleep with progress, or fail on purpose."


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def build_server(
    extra_tools: int = 0, fault_tools: bool = False, echo_in_thread: bool = True, **options: Any
) -> Server:
    server = Server("toolwire-demo", "0.1.0", title="toolwire demo (Python)", instructions=INSTRUCTIONS, **options)

    @server.tool(
        description="Returns the text it is given.",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
        run_in_thread=echo_in_thread,
    )
    def echo(text: str) -> str:
        return text

    @server.tool(
        description="Adds two numbers.",
        input_schema=_object({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]),
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
    )
    def add(a: float, b: float) -> dict:
        return {"sum": a + b}

    @server.tool(
        description="Waits ms milliseconds, reporting progress every 100 ms when asked.",
        input_schema=_object({"ms": {"type": "integer", "minimum": 0, "maximum": 60000}}, ["ms"]),
    )
    async def sleep(ms: int, ctx: Context) -> str:
        loop = asyncio.get_running_loop()
        start = loop.time()
        end = start + ms / 1000
        step = 0
        # Progress counts 100 ms steps (not wall time), so every language reports the same values.
        while True:
            tick = start + (step + 1) * 0.1
            if tick >= end:
                await asyncio.sleep(max(0.0, end - loop.time()))
                break
            await asyncio.sleep(max(0.0, tick - loop.time()))
            step += 1
            await ctx.progress(min(step * 100, ms), ms)
        return f"slept {ms} ms"

    @server.tool(
        description="Fails with the given message.",
        input_schema=_object({"message": {"type": "string"}}, ["message"]),
    )
    def fail(message: str) -> str:
        raise RuntimeError(message)

    def extra(q: str, n: Optional[int] = None) -> str:
        return q

    for i in range(extra_tools):
        server.add_tool(
            extra,
            name=f"tool_{i:03d}",
            description=f"Extra tool number {i} (benchmarks tools/list).",
            input_schema={
                "type": "object",
                "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
                "required": ["q"],
            },
        )
    if fault_tools:
        _add_fault_tools(server)
    return server


def _add_fault_tools(server: Server) -> None:
    """The tools that misbehave on purpose, as in every language's demo (`--fault-tools`)."""

    @server.tool(description="Raises a plain runtime error (a fault injected on purpose).")
    def crash() -> str:
        return {}["injected fault: crash"]

    @server.tool(description="Never returns; its timeout ends the call.", timeout=0.2)
    async def hang() -> str:
        await asyncio.Event().wait()
        return "unreachable"

    @server.tool(
        description="Returns a result its output schema refuses.",
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    )
    def malformed() -> dict:
        return {"n": "not a number"}


# bench/payloads: the large schema every server reads, and the payload tools' constants.
BIG_SCHEMA = Path(__file__).resolve().parent.parent.parent / "bench" / "schemas" / "big.json"
ITEM_BYTES = 64
MAX_BYTES = 64 * 1024 * 1024
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _add_bench_tools(server: Server) -> None:
    """The tools of bench/payloads, as in every language's demo (`--bench-tools`)."""
    nbytes = _object({"bytes": {"type": "integer", "minimum": 0, "maximum": MAX_BYTES}}, ["bytes"])

    @server.tool(
        description="Answers the length in characters of the text it is given.",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
    )
    def take_text(text: str) -> str:
        return str(len(text))

    @server.tool(description="Answers a text of that many ASCII bytes.", input_schema=nbytes)
    def give_text(bytes: int) -> str:  # noqa: A002 (the argument's name in every server)
        return (ALPHABET * (bytes // len(ALPHABET) + 1))[:bytes]

    item = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["id", "name", "tags"],
    }

    @server.tool(
        description="Answers structured content of about that many bytes.",
        input_schema=nbytes,
        output_schema={
            "type": "object",
            "properties": {"items": {"type": "array", "items": item}},
            "required": ["items"],
        },
    )
    def give_structured(bytes: int) -> dict:  # noqa: A002
        tags = ["alpha", "beta", "gamma"]
        return {"items": [{"id": n, "name": f"item-{n:06d}", "tags": tags} for n in range(bytes // ITEM_BYTES)]}

    @server.tool(
        description="Checks an order against a large schema; answers its line count.",
        input_schema=json.loads(BIG_SCHEMA.read_text()),
    )
    def validate_big(order: dict, **rest: Any) -> str:
        return f"lines={len(order['lines'])}"

    @server.tool(
        description="A trivial schema; answers ok.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    def validate_small(text: str) -> str:
        return "ok"


USAGE = (
    "usage: toolwire_demo.py [--extra-tools N [--fault-tools] [--bench-tools] | --conformance]"
    " [--inline-echo] [--redis URL] [--request-state-key SECRET]... [--http PORT [--stateless] [--json | --sse]]"
)


def main(argv: list[str]) -> int:
    extra = 0
    port: Optional[int] = None
    conformance = stateless = json_response = fault_tools = bench_tools = inline_echo = False
    response_mode = None
    # `--redis`: tasks and changes shared with the other replicas; `--request-state-key`
    # (repeatable): the MRTR `requestState` secrets, the first sealing, the same on every replica.
    redis: Optional[str] = None
    state_keys: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--extra-tools":
            extra = int(next(args, "0"))
        elif arg == "--http":
            port = int(next(args, "0"))
        elif arg == "--conformance":
            conformance = True
        elif arg == "--fault-tools":
            fault_tools = True
        elif arg == "--bench-tools":
            bench_tools = True
        elif arg == "--inline-echo":
            inline_echo = True
        elif arg == "--stateless":
            stateless = True
        elif arg == "--json":
            json_response = True
        elif arg == "--sse":
            response_mode = "sse"
        elif arg in ("--redis", "--request-state-key"):
            value = next(args, None)
            if value is None:
                what = "a URL" if arg == "--redis" else "a secret"
                print(f"toolwire-demo: {arg} needs {what}\n{USAGE}", file=sys.stderr)
                return 2
            if arg == "--redis":
                redis = value
            else:
                state_keys.append(value)
        else:
            print(f"toolwire-demo: unknown argument {arg!r}\n{USAGE}", file=sys.stderr)
            return 2
    shared: dict[str, Any] = {"redis": redis, "request_state_keys": state_keys or None}
    try:
        if conformance:
            from toolwire_conformance import build_conformance_server

            server = build_conformance_server(**shared)
        else:
            server = build_server(extra, fault_tools, echo_in_thread=not inline_echo, **shared)
            if bench_tools:
                _add_bench_tools(server)
    except (TransportError, ValueError) as err:
        # An unreachable Redis, a short secret: said once, not as a traceback.
        print(f"toolwire-demo: {err}", file=sys.stderr)
        return 1
    if port is None:
        server.run()
    else:
        options = {"stateless": stateless, "response_mode": response_mode, "json_response": json_response}
        server.run_http("127.0.0.1", port, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
