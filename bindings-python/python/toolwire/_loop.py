"""asyncio event loops whose timers fire on time on Linux.

asyncio's default selector on Linux waits in `epoll_wait`, which counts its timeout in whole
milliseconds (Python rounds up), so a timer fires up to 1 ms after it is due. One sleep alone
rarely shows it (the loop sleeps from just after the timer was set), but with many calls in
flight the loop keeps sleeping for fractions of a millisecond rounded up to a whole one: 64
concurrent `asyncio.sleep(0.01)` tools took 11.1 ms each, and 10.4 ms with the selector below
(the benchmark's slow-tool probe, docs/benchmarks/ceilings.md).
"""

from __future__ import annotations

import select
import selectors
import sys
import warnings
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Optional, TypeVar

if TYPE_CHECKING:
    import asyncio

_T = TypeVar("_T")

_EpollSelector: Optional[type] = getattr(selectors, "EpollSelector", None)

if _EpollSelector is not None:

    class PreciseEpollSelector(_EpollSelector):  # type: ignore[misc,valid-type]
        """epoll for readiness; a wait with a timeout goes through `select()` on the epoll
        descriptor, whose timeout is in microseconds (the descriptor is readable while any
        registered one is ready), then collects the events without waiting."""

        def select(self, timeout: Optional[float] = None) -> list[tuple[Any, int]]:
            if timeout is not None and timeout > 0:
                try:
                    select.select((self.fileno(),), (), (), timeout)
                except ValueError:
                    # An epoll descriptor numbered beyond select()'s FD_SETSIZE: wait in epoll's
                    # whole milliseconds instead.
                    pass
                else:
                    timeout = 0
            return super().select(timeout)


def _default_policy_in_use() -> bool:
    # A policy of the application's own (uvloop, say) chooses its loops; asyncio deprecates
    # policies from 3.14, hence the silenced warning.
    import asyncio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy = asyncio.get_event_loop_policy()
    return type(policy) is asyncio.DefaultEventLoopPolicy


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new asyncio event loop: on Linux, one whose timers fire within microseconds of when
    they are due rather than up to a millisecond late; elsewhere, or when an event loop policy
    of the application's own is set, `asyncio.new_event_loop()`.

    `Server.run()` and `Server.run_http()` serve on such a loop (Python 3.11+); pass it to
    `asyncio.Runner(loop_factory=new_event_loop)` (or `asyncio.run(..., loop_factory=...)` on
    Python 3.12+) to have it under `run_async()` / `serve_http()`. Plumbing, not public API: it
    is not exported from `toolwire`; import it from `toolwire._loop`.
    """
    import asyncio

    if _EpollSelector is None or not _default_policy_in_use():
        return asyncio.new_event_loop()
    return asyncio.SelectorEventLoop(PreciseEpollSelector())


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """Runs `main` to completion on a loop from `new_event_loop()`, as `asyncio.run` does
    (Ctrl-C cancels it); before Python 3.11 (no `asyncio.Runner`), on asyncio's own loop."""
    import asyncio

    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            return runner.run(main)
    return asyncio.run(main)


def start_eagerly(coroutine: Coroutine[Any, Any, Any]) -> Optional[asyncio.Task[Any]]:
    """Runs an `async def` tool's first step now, on the running loop's thread (the engine calls
    this while a mounted request is answered there); `None` when the tool finished in that step
    (it handed its outcome over already), else the task that goes on from where it stopped.

    What Python 3.12's eager tasks do, for 3.11 too: a tool that needs no wait is answered with
    the request, with no turn of the loop and no hop to the engine's thread and back. The step
    runs in a copy of the current context, which the task then keeps, as a new task's would.
    """
    import asyncio
    import contextvars

    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    try:
        waiting = context.run(coroutine.send, None)
    except StopIteration:
        return None
    return loop.create_task(_Resumed(coroutine, waiting), context=context)  # type: ignore[call-arg]


class _Resumed(Coroutine[Any, Any, Any]):
    """A coroutine already stepped once, for a task to go on with: its first step hands the
    task what the coroutine waits on, as if it had just yielded it; from then on (and for a
    cancellation before that) what the task sends or throws goes straight into the coroutine."""

    __slots__ = ("_coroutine", "_waiting", "_started")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], waiting: Any) -> None:
        self._coroutine = coroutine
        self._waiting = waiting
        self._started = False

    def send(self, value: Any) -> Any:
        if not self._started:
            self._started = True
            waiting, self._waiting = self._waiting, None
            return waiting
        return self._coroutine.send(value)

    def throw(self, *exception: Any) -> Any:  # type: ignore[override]
        self._started = True
        self._waiting = None
        return self._coroutine.throw(*exception)

    def close(self) -> None:
        self._coroutine.close()

    def __next__(self) -> Any:
        return self.send(None)

    def __await__(self) -> Any:
        return self
