"""Middleware: a rule of your own around every request (`@server.middleware`).

    @server.middleware
    async def only_staff(request: Request, call_next: CallNext) -> None:
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
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from ._base import logger
from ._content import ProtocolError, ToolError

if TYPE_CHECKING:
    import asyncio

    from ._catalog import CatalogMixin


@dataclasses.dataclass(frozen=True)
class Request:
    """What a middleware sees of a request."""

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


CallNext = Callable[[], Awaitable[Outcome]]
Middleware = Callable[[Request, CallNext], Awaitable[Any]]

_KINDS = {
    "result": "result",
    "toolError": "tool_error",
    "inputRequired": "input_required",
    "taskCreated": "task_created",
    "error": "error",
    "cancelled": "cancelled",
}


class Around:
    """Runs one `async def middleware(request, call_next)` as the engine's before/after pair."""

    def __init__(self, fn: Middleware, server: CatalogMixin) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(
                f"a middleware is an `async def {getattr(fn, '__name__', 'middleware')}(request, call_next)`"
            )
        self._fn = fn
        self._server = server
        self._name = getattr(fn, "__name__", repr(fn))
        # Requests past `before`, by sequence: their `call_next()` waits for the outcome.
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Outcome]]] = {}

    def before(self, request: dict[str, Any], decide: Callable[[dict[str, Any]], None]) -> None:
        """The engine's `before`: starts the middleware on the serving loop and returns; the
        verdict goes to `decide` (no thread waits for it)."""
        loop = self._server._handler_loop()

        def start() -> None:
            task = loop.create_task(self._before(request))
            task.add_done_callback(lambda done: decide(self._verdict_of(done)))

        loop.call_soon_threadsafe(start)

    def _verdict_of(self, done: asyncio.Task[dict[str, Any]]) -> dict[str, Any]:
        if not done.cancelled() and done.exception() is None:
            return done.result()
        logger.error("middleware %s could not run", self._name, exc_info=None if done.cancelled() else done.exception())
        return {"refuse": {"code": -32603, "message": f"Internal error: middleware {self._name} failed"}}

    async def _before(self, raw: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        request = Request(
            method=raw["method"],
            name=raw.get("name"),
            arguments=raw.get("arguments"),
            principal=raw.get("principal"),
            protocol_version=raw.get("protocolVersion"),
            request_id=raw["requestId"],
            sequence=raw["sequence"],
        )
        loop = asyncio.get_running_loop()
        entered: asyncio.Future[None] = loop.create_future()
        outcome: asyncio.Future[Outcome] = loop.create_future()

        async def call_next() -> Outcome:
            if entered.done():
                raise RuntimeError("call_next() is called once per request")
            entered.set_result(None)
            return await outcome

        task = loop.create_task(self._fn(request, call_next))
        await asyncio.wait({entered, task}, return_when=asyncio.FIRST_COMPLETED)
        if entered.done():
            self._waiting[request.sequence] = (loop, outcome)
            task.add_done_callback(self._log_failure)
            return {"continue": True}
        return self._refusal(task)

    def _refusal(self, task: asyncio.Task[Any]) -> dict[str, Any]:
        import asyncio

        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if error is None:
            message = f"Internal error: middleware {self._name} returned without calling call_next()"
            return {"refuse": {"code": -32603, "message": message}}
        if isinstance(error, ProtocolError):
            return {"refuse": {"code": error.code, "message": error.message}}
        if isinstance(error, ToolError):
            return {"toolError": str(error)}
        logger.error("middleware %s raised", self._name, exc_info=error)
        return {"refuse": {"code": -32603, "message": f"Internal error: middleware {self._name} failed"}}

    def _log_failure(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.error("middleware %s raised after call_next()", self._name, exc_info=task.exception())

    def after(self, heard: dict[str, Any]) -> None:
        """The engine's `after`, where the answer is sent: hands the outcome to `call_next()`."""
        waiting = self._waiting.pop(heard["sequence"], None)
        if waiting is None:
            return  # it never got past this middleware's `before`
        loop, outcome = waiting
        result = Outcome(
            kind=_KINDS.get(heard["kind"], "refused"),  # type: ignore[arg-type]
            code=heard.get("code"),
            elapsed=heard["elapsed"],
        )
        if not loop.is_closed():
            loop.call_soon_threadsafe(_settle, outcome, result)


def _settle(future: asyncio.Future[Outcome], outcome: Outcome) -> None:
    if not future.done():
        future.set_result(outcome)
