import asyncio
import time
from typing import Any

import pytest
from toolwire.testing import TestClient, connect

from replica import replica

KEYS = ["a requestState secret of at least 32 bytes, the same on every replica"]
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
MODERN: dict[str, Any] = {"protocol_version": "2026-07-28", "capabilities": TASKS}


async def poll(client: TestClient, task_id: str, *until: str) -> dict[str, Any]:
    """`tasks/get` until the task's status is one of `until`, waiting the `pollIntervalMs` the
    server asks for between two polls (for at most 10 s: a test must not hang)."""
    deadline = time.monotonic() + 10
    while True:
        task = await client.request("tasks/get", {"taskId": task_id})
        if task["status"] in until:
            return task
        assert time.monotonic() < deadline, f"the task is still {task['status']}"
        await asyncio.sleep(task["pollIntervalMs"] / 1000)


@pytest.mark.asyncio
async def test_a_task_made_on_one_replica_is_followed_and_answered_on_the_other(redis_url: str) -> None:
    a, b = replica(redis_url, KEYS), replica(redis_url, KEYS)  # as two processes would be
    async with connect(a, **MODERN) as on_a, connect(b, **MODERN) as on_b:
        created = await on_a.request("tools/call", {"name": "archive", "arguments": {"folder": "2025"}})
        task_id = created["taskId"]

        asking = await poll(on_b, task_id, "input_required")  # B reads the task A runs
        (key,) = asking["inputRequests"]
        answer = {"action": "accept", "content": {"confirm": True}}
        await on_b.request("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})  # B passes it to A

        done = await poll(on_a, task_id, "completed", "failed", "cancelled")
        assert done["result"]["content"][0]["text"] == "Archived 2025."
