import asyncio
import time
from typing import Any

import pytest
from toolwire.testing import TestClient, connect

from archive import server

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
YES = {"action": "accept", "content": {"confirm": True}}


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
async def test_archive_runs_as_a_task_for_a_client_that_follows_tasks() -> None:
    async with connect(server, protocol_version="2026-07-28", capabilities=TASKS) as client:
        created = await client.request("tools/call", {"name": "archive", "arguments": {"folder": "2025"}})
        assert created["resultType"] == "task"  # the call is answered with the task
        task_id = created["taskId"]

        asking = await poll(client, task_id, "input_required")
        ((key, question),) = asking["inputRequests"].items()  # the question, under a key
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Archive 2025?"
        await client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: YES}})

        done = await poll(client, task_id, "completed", "failed", "cancelled")
        assert done["status"] == "completed"
        assert done["result"]["content"][0]["text"] == "Archived 2025."


@pytest.mark.asyncio
async def test_a_client_without_the_extension_gets_the_answer_in_the_call() -> None:
    async with connect(server, protocol_version="2025-11-25", elicitation=lambda params: YES) as client:
        result = await client.call_tool("archive", {"folder": "2025"})
    assert result["content"][0]["text"] == "Archived 2025."
