"""`AsgiApp`: the server's Streamable HTTP endpoint as an ASGI application, to mount in Starlette,
FastAPI or any ASGI server (`server.asgi_app()`).

The engine answers every request (sessions, SSE, resumption, the 2026-07-28 exchanges, the Host
and Origin guard, tokens, limits); this module only moves ASGI messages to and from it: the head
and body chunks in, the response head and body chunks out, and the client's hanging up.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _logs, _native
from ._base import ServerBase, logger

if TYPE_CHECKING:
    import asyncio

Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


class AsgiApp:
    """An ASGI application answering MCP's Streamable HTTP on whatever path it is mounted at.

    It starts on the first request (or at the ASGI lifespan's startup, when the server runs it
    directly): the server's lifespan is entered then, and `async def` tools run on that loop.
    `await app.aclose()` (or leaving `async with app:`) ends its sessions and that hold on the
    lifespan; an ASGI lifespan shutdown does the same. Mounted in Starlette or FastAPI, whose
    mounts do not pass lifespan events on, put `async with app:` in the parent app's lifespan.
    """

    def __init__(self, server: ServerBase, options: dict[str, Any]) -> None:
        self._server = server
        self._options = options
        self._endpoint: Optional[_native.NativeHttpEndpoint] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._bridge: Any = None
        self._starting: Optional[asyncio.Lock] = None

    async def __aenter__(self) -> AsgiApp:
        await self._start()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def _start(self) -> _native.NativeHttpEndpoint:
        import asyncio

        if self._endpoint is not None:
            return self._endpoint
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._endpoint is not None:
                return self._endpoint
            _logs.follow_level()
            server = self._server
            await server._lifespan.enter()
            loop = asyncio.get_running_loop()
            bridge = server._native.bridge(loop)
            loop.add_reader(bridge.fileno(), bridge.drain)
            server._loop = loop
            try:
                self._endpoint = server._native.http_endpoint(bridge, **self._options)
            except BaseException:
                loop.remove_reader(bridge.fileno())
                await server._lifespan.exit()
                raise
            self._loop, self._bridge = loop, bridge
            return self._endpoint

    async def aclose(self) -> None:
        """Ends every session (their calls in flight finish first), then this app's hold on the
        server's lifespan. A request after it starts the app again."""
        import asyncio

        if self._starting is None:
            self._starting = asyncio.Lock()
        # Held throughout: a request meanwhile waits, then starts the app afresh.
        async with self._starting:
            endpoint, loop, bridge = self._endpoint, self._loop, self._bridge
            if endpoint is None or loop is None:
                return
            self._endpoint = None  # new requests wait for the lock, then start afresh
            await loop.run_in_executor(None, endpoint.shutdown)
            loop.remove_reader(bridge.fileno())
            await self._server._lifespan.exit()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)
        else:
            # A WebSocket, say: MCP has no such transport.
            await send({"type": "websocket.close", "code": 1003})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                except Exception as err:
                    await send({"type": "lifespan.startup.failed", "message": str(err)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        import asyncio

        endpoint = await self._start()
        # As it came on the wire (percent-encoded), which the engine's request can carry.
        target = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        client = scope.get("client")
        peer = client[0] if client else None
        method = scope["method"]
        headers = [(bytes(name), bytes(value)) for name, value in scope.get("headers", [])]
        first: Optional[dict[str, Any]] = None
        waited = 0.0
        if _WHOLE_BODY_FIRST:
            # A body that comes in one message (any small one) is answered in one step: on this
            # thread when no Python handler is needed, else with one wait. The engine's body
            # timeout bounds this wait too: past it, the engine answers 408 at once.
            timeout = endpoint.body_read_timeout
            try:
                async with asyncio.timeout(timeout):  # type: ignore[attr-defined]
                    first = await receive()
            except TimeoutError:
                first, waited = None, timeout or 0.0
            if first is not None and first["type"] == "http.request" and not first.get("more_body", False):
                try:
                    exchange = endpoint.answer(method, target, headers, first.get("body", b""), peer)
                except ValueError as err:
                    await _bad_request(send, err)
                    return
                complete = exchange.complete_response()
                if complete is not None:
                    status, response_headers, body = complete
                    try:
                        await send({"type": "http.response.start", "status": status, "headers": response_headers})
                        await send({"type": "http.response.body", "body": body})
                    except OSError:
                        # The ASGI server could not write to a client that went away.
                        logger.debug("an MCP client went away before its answer", exc_info=True)
                    return
                await self._respond(exchange, receive, send, reading=False, first=None)
                return
        try:
            exchange = endpoint.exchange(method, target, headers, peer, waited)
        except ValueError as err:
            await _bad_request(send, err)
            return
        await self._respond(exchange, receive, send, reading=True, first=first)

    async def _respond(
        self,
        exchange: _native.NativeExchange,
        receive: Receive,
        send: Send,
        reading: bool,
        first: Optional[dict[str, Any]],
    ) -> None:
        """The answer of `exchange` to the client, while the request body (from `first` on, when
        `reading`) goes to the engine and the client's hanging up ends it."""
        import asyncio

        loop = asyncio.get_running_loop()
        hung_up = asyncio.Event()

        def outcome() -> tuple[asyncio.Future[Any], Callable[[Any], None]]:
            future = loop.create_future()

            def settle(value: Any) -> None:  # called from the engine's thread
                loop.call_soon_threadsafe(_resolve, future, value)

            return future, settle

        async def read_body(reading: bool, message: Optional[dict[str, Any]]) -> None:
            # The body, chunk by chunk (the engine bounds it and waits for room); then the
            # client's hanging up, which ends the response (and cancels a 2026-07-28 request).
            while True:
                if message is None:
                    message = await receive()
                if message["type"] == "http.disconnect":
                    if reading:
                        exchange.abort_body()
                    hung_up.set()
                    exchange.close()
                    return
                if reading:
                    chunk = message.get("body", b"")
                    if chunk:
                        taken = exchange.try_send_body(chunk)
                        if taken is None:
                            future, settle = outcome()
                            exchange.send_body(chunk, settle)
                            taken = await future
                        if not taken:
                            reading = False  # answered already (too large, refused)
                    if not message.get("more_body", False) and reading:
                        reading = False
                        exchange.end_body()
                message = None

        # The reader (and with it the watch for the client hanging up) starts when something
        # must be waited for: an answer that is all here already needs neither.
        reader = asyncio.create_task(read_body(reading, first)) if reading else None
        try:
            started = exchange.ready_response()
            if started is None:
                if reader is None:
                    reader = asyncio.create_task(read_body(reading, first))
                head, settle = outcome()
                exchange.response(settle)
                started = await head
                if started is None:
                    return  # the client hung up before the answer began
            status, headers, body = started
            # What of a stream is here already goes with the head (the priming event; all of
            # it when the call was quick), and the end with the last chunk: fewer waits for
            # the engine and fewer messages to the ASGI server.
            if body is None:
                body, ended = exchange.ready_chunks(_READY_BYTES)
            else:
                ended = True
            await send({"type": "http.response.start", "status": status, "headers": headers})
            if ended:
                await send({"type": "http.response.body", "body": body})
                return
            if body:
                await send({"type": "http.response.body", "body": body, "more_body": True})
            if reader is None:
                reader = asyncio.create_task(read_body(reading, first))
            while not ended:
                next_chunk, settle = outcome()
                exchange.next_chunk(settle)
                chunk = await next_chunk
                if chunk is None:
                    break
                # With what came after it, and the end when it is here: no wait for either.
                more, ended = exchange.ready_chunks(_READY_BYTES)
                await send(
                    {"type": "http.response.body", "body": chunk + more if more else chunk, "more_body": not ended}
                )
            if not ended and not hung_up.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            # The ASGI server could not write to a client that went away.
            logger.debug("an MCP client went away mid-response", exc_info=True)
        finally:
            exchange.close()
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader


# At most this much of a stream's ready chunks is joined into one message.
_READY_BYTES = 64 * 1024

# The first body message is awaited before the engine sees the request only where
# `asyncio.timeout` bounds that wait (3.11+); before, every body is fed as it comes.
_WHOLE_BODY_FIRST = sys.version_info >= (3, 11)


async def _bad_request(send: Send, err: ValueError) -> None:
    """Not an HTTP request the engine can read (a bad header or target): 400 naming why."""
    body = str(err).encode()
    await send({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if future.done():
        return
    if isinstance(value, BaseException):
        future.set_exception(value)
    else:
        future.set_result(value)
