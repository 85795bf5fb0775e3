"""toolwire._loop.start_eagerly, which starts a mounted request's `async def` tool in place: a
coroutine that finishes in its first step needs no task; one that waits goes on as a task from
where it stopped, in its own copy of the context, cancellable, its result and errors its own,
and that task is the current one in every step, the first included."""

from __future__ import annotations

import asyncio
import contextvars
import sys

import pytest
from toolwire._loop import start_eagerly

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="mounted requests start tools eagerly on 3.11+")

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="request")


async def test_a_coroutine_that_finishes_in_its_first_step_needs_no_task() -> None:
    seen: list[str] = []

    async def at_once() -> None:
        seen.append(where.get())
        where.set("tool")

    assert start_eagerly(at_once()) is None
    assert seen == ["request"]
    assert where.get() == "request", "the tool's context is a copy"


async def test_one_that_waits_goes_on_as_a_task_in_its_own_context() -> None:
    release = asyncio.Event()
    steps: list[str] = []

    async def waits() -> str:
        where.set("tool")
        steps.append("first")
        await release.wait()
        steps.append("second")
        await asyncio.sleep(0)
        return where.get()

    task = start_eagerly(waits())
    assert task is not None
    assert steps == ["first"], "the first step ran before start_eagerly returned"
    assert where.get() == "request"
    release.set()
    assert await task == "tool"
    assert steps == ["first", "second"]


async def test_a_waiting_one_is_cancelled_inside_and_an_error_after_the_wait_is_its_own() -> None:
    waiting = asyncio.Event()
    cancelled = asyncio.Event()

    async def forever() -> None:
        waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = start_eagerly(forever())
    assert task is not None and waiting.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise ValueError("after the wait")

    failing = start_eagerly(fails_later())
    assert failing is not None
    with pytest.raises(ValueError, match="after the wait"):
        await failing


async def test_the_tool_is_its_own_current_task_from_its_first_step() -> None:
    """anyio's cancel scopes and `asyncio.timeout()` need the task a step runs in to be the
    tool's own, the first step included."""
    request = asyncio.current_task()
    release = asyncio.Event()
    seen: list[asyncio.Task | None] = []

    async def tool() -> str:
        seen.append(asyncio.current_task())
        async with asyncio.timeout(5):  # type: ignore[attr-defined]
            await release.wait()
        seen.append(asyncio.current_task())
        try:
            async with asyncio.timeout(0.01):  # type: ignore[attr-defined]
                await asyncio.Event().wait()
        except TimeoutError:
            return "timed out in its own task"
        return "never"

    task = start_eagerly(tool())
    assert task is not None
    assert asyncio.current_task() is request, "the request's task is current again"
    release.set()
    assert await task == "timed out in its own task"
    assert seen == [task, task]


async def test_cancelled_before_its_task_first_ran_what_it_waits_on_is_cancelled_too() -> None:
    inner: list[asyncio.Future] = []

    async def tool() -> None:
        waited = asyncio.ensure_future(asyncio.sleep(10))
        inner.append(waited)
        await waited

    task = start_eagerly(tool())
    assert task is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert inner[0].cancelled()


async def test_an_anyio_cancel_scope_spans_the_first_step_and_the_next() -> None:
    """What httpx's transport does before its first wait: a scope entered in the first step,
    left in a later one (anyio checks that it is the same task)."""
    anyio = pytest.importorskip("anyio")

    async def tool() -> str:
        with anyio.fail_after(5):
            await asyncio.sleep(0.001)
        return "left in the task it was entered in"

    task = start_eagerly(tool())
    assert task is not None
    assert await task == "left in the task it was entered in"
