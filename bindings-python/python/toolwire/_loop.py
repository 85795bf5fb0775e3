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
    """Starts an `async def` tool as a task of the running loop whose first step runs now, on
    this thread (the engine calls this while a mounted request is answered here): `None` when
    the tool finished in that step (it handed its outcome over already), else its task.

    A tool that needs no wait is so answered with the request, with no turn of the loop and no
    hop to the engine's thread and back. The task is the current one during that step, as in any
    later one (anyio's cancel scopes, `asyncio.timeout()` and task groups rely on it), and it
    runs in a copy of the current context, as a new task does. Python 3.12 and later do this
    themselves (`eager_start`); 3.11 makes the task current by hand around the step.
    """
    import asyncio
    import contextvars

    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    if sys.version_info >= (3, 12):
        try:
            task = asyncio.Task(coroutine, loop=loop, context=context, eager_start=True)  # type: ignore[call-arg]
        except (KeyboardInterrupt, SystemExit) as exc:
            # A task's first step re-raises these; out of the loop with them, as from a task.
            loop.call_soon(_reraise, exc)
            return None
        return None if task.done() else task
    return _start_eagerly_by_hand(loop, coroutine, context)


def _reraise(exc: BaseException) -> None:
    raise exc


def reraise_on_running_loop(exc: BaseException) -> None:
    """A `KeyboardInterrupt` or `SystemExit` from a tool run on a loop's thread (answering a
    mounted request in place) is raised out of the loop soon, as from a task: the engine turns
    what a tool raises into its answer, which would swallow it. Elsewhere nothing is done."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_soon(_reraise, exc)


def _start_eagerly_by_hand(
    loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, Any], context: Any
) -> Optional[asyncio.Task[Any]]:
    import asyncio
    from asyncio.tasks import _enter_task, _leave_task  # the same private pair 3.12's eager tasks use

    stepped = _Stepped(coroutine)
    # Made first, so that it is the current task during the step; its own first turn (on the
    # loop's next round) takes up from where the step stopped.
    task = loop.create_task(stepped, context=context)  # type: ignore[call-arg]
    outer = asyncio.current_task(loop)
    if outer is not None:
        _leave_task(loop, outer)
    _enter_task(loop, task)
    try:
        context.run(stepped.first_step)
    finally:
        _leave_task(loop, task)
        if outer is not None:
            _enter_task(loop, outer)
    return None if stepped.finished else task


class _Stepped(Coroutine[Any, Any, Any]):
    """A coroutine whose first step ran before its task's first turn: that turn hands the task
    what the step left it waiting on (or the step's result, or what it raised), as if the
    coroutine had just done so; from then on what the task sends or throws goes straight in."""

    __slots__ = ("_coroutine", "_waiting", "_result", "_error", "_started", "finished")

    def __init__(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        self._coroutine = coroutine
        self._waiting: Any = None
        self._result: Any = None
        self._error: Optional[BaseException] = None
        self._started = False
        self.finished = False

    def first_step(self) -> None:
        try:
            self._waiting = self._coroutine.send(None)
        except StopIteration as stop:
            self._result, self.finished = stop.value, True
        except BaseException as exc:  # noqa: BLE001 (raised again from the task's first turn)
            self._error, self.finished = exc, True

    def send(self, value: Any) -> Any:
        if self._started:
            return self._coroutine.send(value)
        self._started = True
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        if self.finished:
            raise StopIteration(self._result)
        waiting, self._waiting = self._waiting, None
        return waiting

    def throw(self, *exception: Any) -> Any:  # type: ignore[override]
        if not self._started:
            self._started = True
            waiting, self._waiting = self._waiting, None
            if self.finished:
                raise exception[0]
            # Cancelled before its first turn: what it waits on is cancelled too, as a task
            # does with the future it waits on.
            if waiting is not None and hasattr(waiting, "cancel"):
                waiting.cancel()
        return self._coroutine.throw(*exception)

    def close(self) -> None:
        self._coroutine.close()

    def __next__(self) -> Any:
        return self.send(None)

    def __await__(self) -> Any:
        return self
