"""`Context`, what a tool gets besides its arguments: progress, logging, cancellation, and
requests back to the client.

A thin layer over the engine's `NativeContext`; of the package it imports only `_native`, so
`_server` can build one per call without an import cycle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator, Sequence
from typing import Any, Callable, Optional, Union

from . import _native
from ._base import millis


class Sent:
    """What `ctx.progress(...)` and `ctx.log(...)` return: whether it was sent, usable both ways.

    A sync tool calls `ctx.progress(...)` and may test the result (`if ctx.progress(...):`);
    an `async def` tool may `await ctx.progress(...)` (done at once) and gets the bool.
    """

    __slots__ = ("_sent",)

    def __init__(self, sent: bool) -> None:
        self._sent = sent

    def __bool__(self) -> bool:
        return self._sent

    def __await__(self) -> Generator[Any, None, bool]:
        return self._sent
        yield  # a generator that finishes at once: nothing to wait for

    def __repr__(self) -> str:
        return f"Sent({self._sent})"


class _CancelledWaiter:
    """`ctx.cancelled`: call it for an awaitable that completes when the call is cancelled.

    Its truth value raises: `if ctx.cancelled:` was the flag before `ctx.is_cancelled`, and a
    method object would always be true.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeContext) -> None:
        self._native = native

    def __call__(self) -> Awaitable[None]:
        import asyncio

        return self._native.cancelled(asyncio.get_running_loop())

    def __bool__(self) -> bool:
        raise TypeError(
            "ctx.cancelled is a method: `await ctx.cancelled()` waits for cancellation; "
            "use `ctx.is_cancelled` for the flag"
        )


class Context:
    """What a tool gets besides its arguments: annotate a parameter with `Context` to receive it.
    Resources, prompts and completers get one the same way (progress, logging, cancellation,
    client info, the lifespan's value); `tool_name` is then the URI, prompt or argument."""

    __slots__ = ("_native", "_lifespan")

    def __init__(self, native: _native.NativeContext, lifespan: Any = None) -> None:
        self._native = native
        self._lifespan = lifespan

    @property
    def lifespan_context(self) -> Any:
        """What the server's `lifespan` yielded (a database pool, a client...); None without one."""
        return None if self._lifespan is None else self._lifespan.value

    @property
    def request_context(self) -> RequestContext:
        """The official SDK's spelling: `ctx.request_context.lifespan_context` works as there."""
        return RequestContext(self.lifespan_context, self.request_id)

    @property
    def request_id(self) -> Union[int, str]:
        """The id of the `tools/call` request."""
        return self._native.request_id

    @property
    def tool_name(self) -> str:
        return self._native.tool_name

    @property
    def protocol_version(self) -> str:
        return self._native.protocol_version

    @property
    def client_info(self) -> Optional[dict[str, Any]]:
        """The client's `clientInfo` (name, version, ...)."""
        return self._native.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._native.client_capabilities

    @property
    def client_renders_apps(self) -> bool:
        """Whether the client renders MCP Apps views (it declared the extension with their MIME
        type): a tool linked to a view can answer with text alone when not."""
        return self._native.client_renders_apps

    def client_extension(self, id: str) -> Any:
        """The settings the client declared for the extension `id` (this request's own in
        2026-07-28, the session's before), or None when it did not declare it."""
        return self._native.client_extension(id)

    @property
    def input_responses(self) -> dict[str, Any]:
        """2026-07-28 MRTR: the client's answers to what an earlier round asked, by key."""
        return self._native.input_responses

    @property
    def request_state(self) -> Optional[str]:
        """2026-07-28 MRTR: the state this tool returned with its last `InputRequired`,
        verified by the engine (an altered or expired one never reaches the tool)."""
        return self._native.request_state

    @property
    def trace_context(self) -> dict[str, Optional[str]]:
        """The request's W3C trace context: `traceparent`, `tracestate`, `baggage`."""
        return self._native.trace_context

    @property
    def is_cancelled(self) -> bool:
        """True once the call was cancelled (by the client, its deadline, or shutdown).

        Sync tools should check it in long loops; `async def` tools are cancelled for them
        (`asyncio.CancelledError`).
        """
        return self._native.is_cancelled

    @property
    def cancelled(self) -> Callable[[], Awaitable[None]]:
        """`await ctx.cancelled()` completes when the call is cancelled (see `is_cancelled` for
        the flag; `if ctx.cancelled:` raises TypeError rather than being always true)."""
        return _CancelledWaiter(self._native)

    @property
    def wants_progress(self) -> bool:
        """Whether the client asked for progress (its request carried a `progressToken`)."""
        return self._native.wants_progress

    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> Sent:
        """Sends progress if the client asked for it and `progress` grew.

        Callable from sync tools (`ctx.progress(1, 3)`) and awaitable in `async def` ones
        (`await ctx.progress(1, 3)`, done at once); either way the result says whether it was sent.
        """
        return Sent(self._native.progress(progress, total, message))

    def report_progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> Sent:
        """The official SDK's name of `progress`, awaitable as there (`await
        ctx.report_progress(1, 3)`) and callable from sync tools; says whether it was sent."""
        return Sent(self._native.progress(progress, total, message))

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> Sent:
        """Sends `notifications/message` if `level` passes the client's level; says whether it
        was sent. Awaitable too, as the official SDK's `await ctx.log(...)` is."""
        return Sent(self._native.log(level, data, logger))

    def debug(self, data: Any) -> Sent:
        return self.log("debug", data)

    def close_sse_stream(self) -> None:
        """Over Streamable HTTP with an SSE answer: closes the connection carrying this call
        (after a retry hint) without ending the call; the client reconnects and resumes, and
        gets what was sent meanwhile. No effect on stdio."""
        self._native.close_sse_stream()

    def info(self, data: Any) -> Sent:
        return self.log("info", data)

    def warning(self, data: Any) -> Sent:
        return self.log("warning", data)

    def error(self, data: Any) -> Sent:
        return self.log("error", data)

    async def sample(self, params: dict[str, Any], timeout: Optional[float] = None) -> dict[str, Any]:
        """`sampling/createMessage` (params as in the spec); raises CapabilityError if undeclared.
        Past `timeout` seconds (progress from the client extends it) raises `TimeoutError`.

        In a 2026-07-28 request nothing is sent: the answer comes from this round, or
        `InputRequiredError` (a `BaseException`) ends the tool and the engine asks the client,
        who calls again; this line then has its answer. Code before the question runs again
        each round: put side effects after the questions."""
        return await self._client("sample", params, timeout)

    async def elicit(self, params: dict[str, Any], timeout: Optional[float] = None) -> dict[str, Any]:
        """`elicitation/create` (form or URL mode); raises CapabilityError if undeclared. In a
        2026-07-28 request, answered through MRTR as `sample` says."""
        return await self._client("elicit", params, timeout)

    async def list_roots(self, timeout: Optional[float] = None) -> list[dict[str, Any]]:
        """The client's roots (`roots/list`), each `{"uri", "name"?, "_meta"?}`; raises
        CapabilityError if undeclared."""
        return await self._client("roots", {}, timeout)

    async def ask_all(
        self, questions: Sequence[tuple[str, dict[str, Any]]], timeout: Optional[float] = None
    ) -> list[dict[str, Any]]:
        """Several questions at once, each `(method, params)` with method
        `"elicitation/create"`, `"sampling/createMessage"` or `"roots/list"`; returns their
        results in order (for roots, `{"roots": [...]}`). In a 2026-07-28 request they make one
        round: the client is asked every unanswered one together. In a session they are sent
        one after the other. An unknown method raises ValueError before anything is asked."""
        import asyncio

        return await self._native.ask_all(
            [(method, params) for method, params in questions], asyncio.get_running_loop(), millis("timeout", timeout)
        )

    async def request(
        self, method: str, params: Optional[dict[str, Any]] = None, timeout: Optional[float] = None
    ) -> Any:
        """Sends any request to the client and returns its result (`ClientRequestError` if it
        answers with an error, `TimeoutError` past `timeout` seconds)."""
        import asyncio

        return await self._native.request(method, params, asyncio.get_running_loop(), millis("timeout", timeout))

    async def _client(self, kind: str, params: dict[str, Any], timeout: Optional[float]) -> Any:
        import asyncio

        return await self._native.client_request(kind, params, asyncio.get_running_loop(), millis("timeout", timeout))


class RequestContext:
    """`ctx.request_context`, as the official Python SDK names it: the lifespan's value and the
    request's id."""

    __slots__ = ("lifespan_context", "request_id")

    def __init__(self, lifespan_context: Any, request_id: Union[int, str]) -> None:
        self.lifespan_context = lifespan_context
        self.request_id = request_id
