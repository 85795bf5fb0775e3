"""toolwire._loop.start_eagerly, which starts a mounted request's `async def` tool in place: a
coroutine that finishes in its first step needs no task; one that waits goes on as a task from
where it stopped, in its own copy of the context, cancellable, its result and errors its own."""

from __future__ import annotations

import asyncio
import contextvars

import pytest
from toolwire._loop import start_eagerly

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
