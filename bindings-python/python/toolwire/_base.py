"""The state every part of `Server` shares: the engine's server and the asyncio loops that run
`async def` handlers.

`Server` (in `_server`) is assembled from `CatalogMixin` (`_catalog`) and `HttpMixin` (`_http`);
both need this state, so it lives here rather than in `_server`, which imports them: the
mixins import this module, never `_server`, and there is no import cycle.
"""

from __future__ import annotations

import logging
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


def check_counts(**counts: Optional[int]) -> None:
    """Raises ValueError for a count or size option that is negative (rather than the
    OverflowError the conversion to the engine's unsigned numbers would raise)."""
    for name, value in counts.items():
        if value is not None and value < 0:
            raise ValueError(f"{name} must be 0 or more, not {value}")


class Lifespan:
    """A server's lifespan: the user's async context manager, entered once before serving and
    exited when the last serve that entered it ends. Its value is what handlers read as
    `ctx.lifespan_context` (and a `Round`'s `lifespan_context`)."""

    def __init__(self, factory: Optional[Callable[[Any], AbstractAsyncContextManager[Any]]]) -> None:
        if factory is not None and not callable(factory):
            raise TypeError("lifespan must be a callable returning an async context manager")
        self.factory = factory
        self.value: Any = None
        self._users = 0
        self._manager: Optional[AbstractAsyncContextManager[Any]] = None
        # While it is being entered: the entry, which a concurrent serve awaits too.
        self._entering: Optional[asyncio.Future[None]] = None

    async def enter(self, server: Any) -> None:
        if self.factory is None:
            return
        import asyncio

        self._users += 1
        if self._entering is not None:
            try:
                await asyncio.shield(self._entering)
            except BaseException:
                self._users -= 1
                raise
            return
        if self._users > 1:
            return
        self._entering = asyncio.get_running_loop().create_future()
        try:
            manager = self.factory(server)
            if not hasattr(manager, "__aenter__"):
                raise TypeError(
                    "lifespan(server) must return an async context manager "
                    "(decorate an async generator with @contextlib.asynccontextmanager)"
                )
            self.value = await manager.__aenter__()
            self._manager = manager
        except BaseException as exc:
            self._users -= 1
            self._entering.set_exception(exc)
            self._entering.exception()  # retrieved: a failure nobody else awaited is not logged
            raise
        finally:
            entering, self._entering = self._entering, None
            if not entering.done():
                entering.set_result(None)

    async def exit(self) -> None:
        if self.factory is None or self._users == 0:
            return
        self._users -= 1
        if self._users > 0 or self._manager is None:
            return
        manager, self._manager = self._manager, None
        try:
            await manager.__aexit__(None, None, None)
        finally:
            self.value = None


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
        await self._lifespan.enter(self)
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
