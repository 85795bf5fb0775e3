"""The Python demo's tools (examples/python/toolwire_demo.py) over Streamable HTTP, served by
toolwire's own listener or mounted as an ASGI app under uvicorn: bench/mounts' Python servers.

    python bench/mounts/python_app.py --port P --serve builtin|uvicorn [--workers N] [--bare]
        [--async-echo | --inline-echo]

builtin: `server.run_http()`; uvicorn: `server.asgi_app()` under uvicorn, in this process with
one worker, or N worker processes (uvicorn's `--workers`, imported by name: `make_app`).
--bare: no toolwire under uvicorn: an ASGI app answering the load generator's four requests
itself (`bare_app`), which is what uvicorn alone costs per request. --async-echo: the demo's
`echo` as an `async def` (as most Python MCP tools are written), the rest unchanged.
--inline-echo: the demo's plain `def echo` registered with `run_in_thread=False`.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "examples" / "python"))

from toolwire_demo import _object, build_server  # noqa: E402


def demo_server(async_echo: bool, inline_echo: bool = False):  # noqa: ANN201 (a toolwire Server)
    server = build_server(100, echo_in_thread=not inline_echo)
    if async_echo:
        # The demo's own description and schema: only the function differs.
        server.remove_tool("echo")

        @server.tool(
            name="echo",
            description="Returns the text it is given.",
            input_schema=_object({"text": {"type": "string"}}, ["text"]),
        )
        async def echo(text: str) -> str:
            return text

    return server


def make_app():  # noqa: ANN201 (an ASGI app)
    """One worker's app: the demo server's endpoint (each worker builds its own server)."""
    return demo_server(async_echo=False).asgi_app()


def make_async_app():  # noqa: ANN201 (an ASGI app)
    """`make_app` with the demo's `echo` as an `async def`."""
    return demo_server(async_echo=True).asgi_app()


def make_inline_app():  # noqa: ANN201 (an ASGI app)
    """`make_app` with the demo's `echo` registered with `run_in_thread=False`."""
    return demo_server(async_echo=False, inline_echo=True).asgi_app()


async def bare_app(scope, receive, send) -> None:  # noqa: ANN001 (ASGI)
    """The load generator's four requests (initialize, the initialized notification, an echo
    call, DELETE) answered by a few lines of Python, no MCP engine, reading and parsing the body
    as any JSON route does."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    headers = [(b"content-type", b"application/json")]
    status, answer = 200, b""
    if scope["method"] == "POST":
        request = json.loads(body)
        if "id" not in request:
            status = 202
        elif request["method"] == "initialize":
            headers.append((b"mcp-session-id", uuid.uuid4().hex.encode()))
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bare", "version": "1"},
            }
            answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        else:
            text = request["params"]["arguments"]["text"]
            result = {"content": [{"type": "text", "text": text}]}
            answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
    headers.append((b"content-length", str(len(answer)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


def make_bare_app():  # noqa: ANN201 (an ASGI app)
    return bare_app


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--serve", choices=["builtin", "uvicorn"], required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--bare", action="store_true")
    echo = parser.add_mutually_exclusive_group()
    echo.add_argument("--async-echo", action="store_true")
    echo.add_argument("--inline-echo", action="store_true")
    args = parser.parse_args()
    if args.workers < 1 or (args.serve == "builtin" and (args.workers != 1 or args.bare)):
        parser.error("--workers: a positive number; the built-in server runs in one process, with toolwire")
    if args.serve == "builtin":
        demo_server(args.async_echo, args.inline_echo).run_http("127.0.0.1", args.port)
        return 0
    import uvicorn

    uvicorn.run(
        "python_app:make_bare_app"
        if args.bare
        else "python_app:make_async_app"
        if args.async_echo
        else "python_app:make_inline_app"
        if args.inline_echo
        else "python_app:make_app",
        factory=True,
        app_dir=str(HERE),
        host="127.0.0.1",
        port=args.port,
        workers=args.workers,
        log_level="warning",
        access_log=False,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
