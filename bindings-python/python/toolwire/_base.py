"""The state every part of `Server` shares: the engine's server and the asyncio loops that run
`async def` handlers.

`Server` (in `_server`) is assembled from `CatalogMixin` (`_catalog`) and `HttpMixin` (`_http`);
both need this state, so it lives here rather than in `_server`, which imports them: the
mixins import this module, never `_server`, and there is no import cycle.
"""

from __future__ import annotations

import logging
import math
import threading
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from . import _logs, _native
from ._loop import new_event_loop

if TYPE_CHECKING:
    # Imported where a loop is used (`_loop` says why).
    import asyncio

logger = logging.getLogger("toolwire")

F = TypeVar("F", bound=Callable[..., Any])


def millis(name: str, seconds: Optional[float]) -> Optional[int]:
    """Seconds as whole milliseconds, rounded up (a tiny limit must not become 0: at once, or
    "none" where 0 means none); a negative one is a ValueError naming `name`."""
    if seconds is None:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{name} must be 0 or more seconds, not {seconds}")
    # Rounded to a nanosecond first: 16.1 * 1000 is 16100.000000000002 in binary floating point.
    return math.ceil(round(seconds * 1000, 6))


def check_counts(**counts: Optional[int]) -> None:
    """Raises ValueError for a count or size option that is negative (rather than the
    OverflowError the conversion to the engine's unsigned numbers would raise)."""
    for name, value in counts.items():
        if value is not None and value < 0:
            raise ValueError(f"{name} must be 0 or more, not {value}")


class Lifespan:
    """A server's lifespan: the user's async context manager and the value it yields, which
    handlers read as `ctx.lifespan_context` (and a `Round`'s `lifespan_context`).

    The engine runs it by the rules every language shares: started once by the first serve
    that holds it (`async with server:`, `run_async`, `serve_http`, an ASGI app, a test client)
    or by a call that arrives with nothing holding it; calls wait until it runs; a failed start
    is each waiter's error; stopped after the last serve lets go and the calls in flight end.
    Here it is entered and exited in one task of its own, on the loop of the serve that held
    it last (or the handlers' loop), so a context manager with a task group in it works."""

    def __init__(self, factory: Optional[Callable[[Any], AbstractAsyncContextManager[Any]]]) -> None:
        if factory is not None and not callable(factory):
            raise TypeError("lifespan must be a callable returning an async context manager")
        self.factory = factory
        self.value: Any = None
        self._server: Any = None
        # The engine's holds this server's serves took, let go of last first.
        self._holds: list[Any] = []
        # Where the next start runs: the loop of the serve that held it last.
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        # While it runs: its loop, the event that ends it and the task that enters and exits it.
        self._running: Optional[tuple[asyncio.AbstractEventLoop, asyncio.Event, asyncio.Task[None]]] = None
        # Why the last start failed: what a serve that waited for it raises.
        self._failure: Optional[BaseException] = None

    def bind(self, server: Any) -> None:
        self._server = server
        if self.factory is not None:
            server._native.set_lifespan(self)

    # Called by the engine, on one of its threads.

    def start(self, done: Callable[..., None]) -> None:
        # The loop of the serve that held it last, while it runs; else the handlers' loop, or
        # the private one when that has stopped (a stopped loop takes the callback and never
        # runs it, and every call would wait for good).
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._server._handler_loop()
            if not loop.is_running():
                loop = self._server._private_loop()
        try:
            loop.call_soon_threadsafe(self._begin, loop, done)
        except RuntimeError as exc:  # the loop closed meanwhile
            done(str(exc))

    def stop(self, done: Callable[..., None]) -> None:
        running = self._running
        if running is None:
            done()
            return
        loop, ending, task = running

        def end() -> None:
            ending.set()
            task.add_done_callback(lambda _task: done())

        try:
            loop.call_soon_threadsafe(end)
        except RuntimeError:  # its loop has closed, and the task with it
            done()

    # On the loop.

    def _begin(self, loop: asyncio.AbstractEventLoop, done: Callable[..., None]) -> None:
        import asyncio

        ending = asyncio.Event()
        task = loop.create_task(self._run(ending, done))
        self._running = (loop, ending, task)

    async def _run(self, ending: asyncio.Event, done: Callable[..., None]) -> None:
        try:
            manager = self.factory(self._server)  # type: ignore[misc]
            if not hasattr(manager, "__aenter__"):
                raise TypeError(
                    "lifespan(server) must return an async context manager "
                    "(decorate an async generator with @contextlib.asynccontextmanager)"
                )
            value = await manager.__aenter__()
        except BaseException as exc:
            self._running = None
            self._failure = exc
            done(str(exc) or type(exc).__name__)
            if not isinstance(exc, Exception):
                raise  # a cancel or an exit is the loop's
            return
        self._failure = None
        self.value = value
        done()
        try:
            await ending.wait()
        finally:
            self._running = None
            try:
                await manager.__aexit__(None, None, None)
            except Exception:
                logger.exception("the server's lifespan failed to exit")
            finally:
                self.value = None

    # A serve's hold, from its own loop.

    async def enter(self) -> None:
        """Holds it (started first): a failed start raises what the context manager raised."""
        if self.factory is None:
            return
        import asyncio

        loop = asyncio.get_running_loop()
        self._loop = loop
        held: asyncio.Future[tuple[Any, Optional[str]]] = loop.create_future()

        def told(hold: Any, error: Optional[str]) -> None:  # on an engine thread
            loop.call_soon_threadsafe(_settle_hold, held, hold, error)

        self._server._native.hold_lifespan(told)
        try:
            hold, error = await asyncio.shield(held)
        except asyncio.CancelledError:
            # Given up: the hold, when it comes, is let go of.
            held.add_done_callback(_release_unwanted)
            raise
        if error is not None:
            failure = self._failure
            if failure is not None:
                raise failure
            raise RuntimeError(error)
        self._holds.append(hold)

    async def exit(self) -> None:
        """Lets go of a hold; the last one returns once the clean-up has run."""
        if not self._holds:
            return
        import asyncio

        hold = self._holds.pop()
        if not self._holds:
            self._loop = None
        loop = asyncio.get_running_loop()
        released: asyncio.Future[None] = loop.create_future()
        hold.release(lambda: loop.call_soon_threadsafe(_settle_release, released))
        await released


def _settle_hold(held: asyncio.Future[tuple[Any, Optional[str]]], hold: Any, error: Optional[str]) -> None:
    if held.cancelled():
        if hold is not None:
            hold.release(lambda: None)
        return
    held.set_result((hold, error))


def _release_unwanted(held: asyncio.Future[tuple[Any, Optional[str]]]) -> None:
    if not held.cancelled():
        hold, _ = held.result()
        if hold is not None:
            hold.release(lambda: None)


def _settle_release(released: asyncio.Future[None]) -> None:
    if not released.done():
        released.set_result(None)


class ServerBase:
    """The engine's server and the loops of a `Server`."""

    def __init__(
        self,
        native: _native.NativeServer,
        lifespan: Optional[Callable[[Any], AbstractAsyncContextManager[Any]]] = None,
    ) -> None:
        # The engine's logs: the level the `toolwire` logger has now.
        _logs.follow_level()
        self._native = native
        self._background_loop: Optional[asyncio.AbstractEventLoop] = None
        # Engine threads may ask for it at once (a server serving without a loop).
        self._background_lock = threading.Lock()
        # The loop `async def` resources, prompts and completers run on (the serving one).
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._lifespan = Lifespan(lifespan)
        self._lifespan.bind(self)

    def metrics(self) -> dict[str, Any]:
        """What the server has done and is doing: by method (`"methods"`) and by tool
        (`"tools"`) the `calls`, `inFlight`, how they ended (`"outcomes"`: `result`,
        `tool_error`, `invalid_params`, `cancelled`, `refused`, …) and a latency histogram
        (`"latency"`: `count`, `sumSeconds`, cumulative `buckets` of `le` seconds); then
        `callsInFlight`, `callsQueued`, `refused` by limit, live `sessions`, open SSE `streams`,
        `listenStreams` and `tasks` running. Counted since the server was made."""
        return self._native.metrics()

    def metrics_text(self) -> str:
        """The metrics in the Prometheus text format (0.0.4), to serve on a route of your
        own (`serve_http(metrics_path="/metrics")` serves them itself)."""
        return self._native.metrics_text()

    async def __aenter__(self) -> Any:
        """`async with server:` enters the lifespan (serving does too, for as long as it
        serves); a transport of your own (`session()`) serves inside such a block."""
        await self._lifespan.enter()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._lifespan.exit()

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        with self._background_lock:
            if self._background_loop is None or self._background_loop.is_closed():
                loop = new_event_loop()
                threading.Thread(target=loop.run_forever, name="toolwire-loop", daemon=True).start()
                self._background_loop = loop
            return self._background_loop

    def _handler_loop(self) -> asyncio.AbstractEventLoop:
        """The loop `async def` resources, prompts and middleware run on: the serving one, or
        (serving without a loop, or the one bound before has closed) the private one."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return self._private_loop()
        return loop
