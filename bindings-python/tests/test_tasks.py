"""The tasks extension from Python: a tool marked `task_support` runs as a task for a client
that declares the extension, `await ctx.elicit(...)` inside it waits for `tasks/update`, and
`ProtocolError` ends a task `failed` (a JSON-RPC error outside one)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import Client
from toolwire import Context, ProtocolError, Server

TASKS = "io.modelcontextprotocol/tasks"
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def meta(extension: bool = True) -> dict[str, Any]:
    caps: dict[str, Any] = {"elicitation": {}}
    if extension:
        caps["extensions"] = {TASKS: {}}
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    }


def request(client: Client, id: int, method: str, params: dict[str, Any], extension: bool = True) -> Any:
    client.send({"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta(extension)}})
    return client.recv()


def build() -> Server:
    server = Server("tasks", "1")

    @server.tool(input_schema=NO_ARGS, task_support="optional")
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit({"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}})
        return f"answered {answer['action']}"

    @server.tool(input_schema=NO_ARGS, task_support="required")
    def broken() -> str:
        raise ProtocolError(-32603, "broken: internal failure")

    return server


def wait_for(client: Client, task: str, status: str) -> Any:
    """Polls until the task reaches `status` or ends (each poll answered in turn), for up to
    10 s: the handler runs on other threads, which a busy machine may hold up (waiting on each
    answer lets them run)."""
    deadline = time.monotonic() + 10
    id = 100
    while time.monotonic() < deadline:
        id += 1
        task_now = request(client, id, "tasks/get", {"taskId": task})["result"]
        if task_now["status"] in (status, "completed", "failed", "cancelled"):
            return task_now
    pytest.fail("the task never got there")


def test_a_question_inside_a_task_waits_for_tasks_update() -> None:
    client = Client(build())
    created = request(client, 1, "tools/call", {"name": "confirm", "arguments": {}})["result"]
    assert created["resultType"] == "task", created
    parked = wait_for(client, created["taskId"], "input_required")
    ((key, question),) = parked["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    ack = request(
        client, 2, "tasks/update", {"taskId": created["taskId"], "inputResponses": {key: {"action": "accept"}}}
    )
    assert ack["result"]["resultType"] == "complete"
    done = wait_for(client, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "answered accept", done


def test_protocol_error_fails_the_task_and_is_a_json_rpc_error_outside_one() -> None:
    client = Client(build())
    created = request(client, 1, "tools/call", {"name": "broken", "arguments": {}})["result"]
    failed = wait_for(client, created["taskId"], "failed")
    assert failed["error"] == {"code": -32603, "message": "broken: internal failure"}, failed
    assert "result" not in failed
    # Without the extension a task-only tool is refused; in a legacy session it runs in its request.
    refused = request(client, 2, "tools/call", {"name": "broken", "arguments": {}}, extension=False)
    assert refused["error"]["code"] == -32021
    legacy = Client(build())
    legacy.initialize()
    legacy.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "broken", "arguments": {}}})
    assert legacy.recv()["error"] == {"code": -32603, "message": "broken: internal failure"}


def test_protocol_error_needs_a_json_rpc_code() -> None:
    with pytest.raises(TypeError):
        ProtocolError("oops", "message")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ProtocolError(2**40, "message")


def test_task_support_is_checked_at_registration() -> None:
    server = Server("tasks", "1")
    with pytest.raises(ValueError, match="task support"):
        server.add_tool(lambda: "x", name="odd", input_schema=NO_ARGS, task_support="sometimes")  # type: ignore[arg-type]


def test_the_task_options_reach_the_engine() -> None:
    """`task_ttl` and `task_poll_interval` are what a created task reports (in ms), `task_after`
    0 makes a call a task at once, and `max_tasks_per_principal` refuses a task past it."""
    server = Server("tasks", "1", task_after=0, task_ttl=90, task_poll_interval=0.25, max_tasks_per_principal=1)

    @server.tool(input_schema=NO_ARGS, task_support="optional")
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit({"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}})
        return f"answered {answer['action']}"

    client = Client(server)
    created = request(client, 1, "tools/call", {"name": "confirm", "arguments": {}})["result"]
    assert created["resultType"] == "task", created
    assert (created["ttlMs"], created["pollIntervalMs"]) == (90_000, 250)
    refused = request(client, 2, "tools/call", {"name": "confirm", "arguments": {}})
    assert refused["error"]["code"] == -32603, refused


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"task_ttl": 0}, "task_ttl and task_poll_interval must be longer than zero"),
        ({"max_tasks": 0}, "max_tasks and max_tasks_per_principal must be at least 1"),
        ({"task_after": -1}, "task_after must be 0 or more seconds"),
    ],
)
def test_a_task_option_out_of_range_is_refused_naming_it(option: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Server("tasks", "1", **option)
