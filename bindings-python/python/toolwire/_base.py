"""The state every part of `Server` shares: the engine's server and the asyncio loops that run
`async def` handlers.

`Server` (in `_server`) is assembled from `CatalogMixin` (`_catalog`) and `HttpMixin` (`_http`);
both need this state, so it lives here rather than in `_server`, which imports them: the
mixins import this module, never `_server`, and there is no import cycle.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Callable, Optional, TypeVar

from . import _logs, _native
from ._loop import new_event_loop

logger = logging.getLogger("toolwire")

F = TypeVar("F", bound=Callable[..., Any])


def check_counts(**counts: Optional[int]) -> None:
    """Raises ValueError for a count or size option that is negative (rather than the
    OverflowError the conversion to the engine's unsigned numbers would raise)."""
    for name, value in counts.items():
        if value is not None and value < 0:
            raise ValueError(f"{name} must be 0 or more, not {value}")


class ServerBase:
    """The engine's server and the loops of a `Server`."""

    def __init__(self, native: _native.NativeServer) -> None:
        # The engine's logs: the level the `toolwire` logger has now.
        _logs.follow_level()
        self._native = native
        self._background_loop: Optional[asyncio.AbstractEventLoop] = None
        # The loop `async def` resources, prompts and completers run on (the serving one).
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        if self._background_loop is None or self._background_loop.is_closed():
            loop = new_event_loop()
            threading.Thread(target=loop.run_forever, name="toolwire-loop", daemon=True).start()
            self._background_loop = loop
        return self._background_loop
