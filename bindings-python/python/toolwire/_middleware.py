"""Middleware: a rule of your own around every request (`@server.middleware`).

    @server.middleware
    async def only_staff(request: RequestInfo, call_next: CallNext) -> None:
        if request.principal not in STAFF:
            raise ProtocolError(-32001, "Forbidden")      # a JSON-RPC error instead
        outcome = await call_next()                        # the request is handled here
        audit.info("%s %s: %s in %.3fs", request.method, request.name, outcome.kind, outcome.elapsed)

The engine runs it in front of every request but `initialize`: the code before `call_next()`
decides (raise `ProtocolError` for an error, `ToolError` for an `isError` result of a
`tools/call`); `call_next()` returns how the request ended. What runs after it cannot change the
answer (it is sent by then): it observes. Middlewares run in the order they were added.
"""

from __future__ import annotations

import dataclasses
import inspect
import traceback
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from . import _native
from ._content import ProtocolError, ToolError

if TYPE_CHECKING:
    import asyncio

    from ._catalog import CatalogMixin


@dataclasses.dataclass(frozen=True)
class RequestInfo:
    """What a middleware sees of a request (`RequestInfo` in every language)."""

    method: str
    """The JSON-RPC method, e.g. `"tools/call"`."""
    name: Optional[str]
    """The tool or prompt it names, or the resource URI."""
    arguments: Optional[dict[str, Any]]
    """The arguments of a `tools/call` or `prompts/get`."""
    principal: Optional[str]
    """The bearer token's subject, when tokens are required."""
    protocol_version: Optional[str]
    """The protocol version it is served in (`None` before `initialize`)."""
    request_id: Union[str, int]
    sequence: int
    """A number no other request of this process has (to match log lines)."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a request ended."""

    kind: Literal["result", "tool_error", "input_required", "task_created", "error", "cancelled", "refused"]
    """A result; an `isError` tool result; a 2026-07-28 round asking the client first; a task
    created for the call; a JSON-RPC error (`code`); no answer (cancelled, or its session
    ended); or refused by a middleware."""
    code: Optional[int]
    elapsed: float
    """Seconds from the request's arrival to its answer."""


Request = RequestInfo
"""The name `RequestInfo` had before 0.2; kept for one release."""

CallNext = Callable[[], Awaitable[Outcome]]
Middleware = Callable[[RequestInfo, CallNext], Awaitable[Any]]

_KINDS = {
    "result": "result",
    "toolError": "tool_error",
    "inputRequired": "input_required",
    "taskCreated": "task_created",
    "error": "error",
    "cancelled": "cancelled",
}


class Around:
    """Runs one `async def middleware(request, call_next)` for the engine, which decides what
    its ending means (`call_next()` once; a return without it, or a failure, refuses the
    request with -32603; what runs after it only observes): this converts and reports."""

    def __init__(self, fn: Middleware, server: CatalogMixin) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(
                f"a middleware is an `async def {getattr(fn, '__name__', 'middleware')}(request, call_next)`"
            )
        self._fn = fn
        self._server = server
        self.name = getattr(fn, "__name__", repr(fn))

    def start(self, request: dict[str, Any], call: _native.AroundCall) -> None:
        """Starts the middleware on the serving loop and returns (no thread waits for it)."""
        loop = self._server._handler_loop()

        def start() -> None:
            loop.create_task(self._run(request, call))

        loop.call_soon_threadsafe(start)

    async def _run(self, raw: dict[str, Any], call: _native.AroundCall) -> None:
        import asyncio

        request = RequestInfo(
            method=raw["method"],
            name=raw.get("name"),
            arguments=raw.get("arguments"),
            principal=raw.get("principal"),
            protocol_version=raw.get("protocolVersion"),
            request_id=raw["requestId"],
            sequence=raw["sequence"],
        )
        loop = asyncio.get_running_loop()

        async def call_next() -> Outcome:
            ended: asyncio.Future[dict[str, Any]] = loop.create_future()
            call.next(lambda heard: loop.call_soon_threadsafe(_settle, ended, heard))
            heard = await ended
            return Outcome(
                kind=_KINDS.get(heard["kind"], "refused"),  # type: ignore[arg-type]
                code=heard.get("code"),
                elapsed=heard["elapsed"],
            )

        try:
            await self._fn(request, call_next)
        except ProtocolError as error:
            call.finish({"refuse": {"code": error.code, "message": error.message}})
        except ToolError as error:
            call.finish({"toolError": str(error)})
        except BaseException as error:  # noqa: BLE001 - any failure refuses (or, after call_next, is logged)
            trace = traceback.format_exception(type(error), error, error.__traceback__)
            call.finish({"failed": "".join(trace).rstrip()})
            if not isinstance(error, Exception):
                raise
        else:
            call.finish(None)


def _settle(future: asyncio.Future[dict[str, Any]], heard: dict[str, Any]) -> None:
    if not future.done():
        future.set_result(heard)
