"""The conformance server's tasks-extension fixtures with Python handlers (the alpha harness's
`tasks-*` scenarios). Nothing in them knows about tasks: each is marked with how it may run,
the engine decides when a call becomes a task, and inside one `await ctx.elicit(...)` waits for
the client's `tasks/update`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from toolwire import Context, InputRequired, ProtocolError, Server, ToolError
from toolwire_conformance_modern import accepted_content

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def _form(message: str, properties: dict[str, Any], required: Optional[list[str]] = None) -> dict[str, Any]:
    return {
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": required or []},
    }


def add_task_fixtures(server: Server) -> None:
    @server.tool(
        description="Greets by name",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(
        description="Computes for the given number of seconds",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "integer", "minimum": 0}, "label": {"type": "string"}},
        },
        task_support="optional",
    )
    async def slow_compute(seconds: int = 0, label: str = "default") -> str:
        # Cancelling the task cancels this coroutine: the sleep ends with it.
        await asyncio.sleep(seconds)
        return f'Computation "{label}" completed after {seconds}s'

    @server.tool(
        description="Runs a second, then fails (a tool error: the task completes)",
        input_schema=NO_ARGS,
        task_support="required",
    )
    async def failing_job() -> str:
        await asyncio.sleep(1)
        raise ToolError("failing_job always fails")

    @server.tool(
        description="Fails with a JSON-RPC error (the task fails)",
        input_schema=NO_ARGS,
        task_support="required",
    )
    def protocol_error_job() -> str:
        raise ProtocolError(-32603, "protocol_error_job: internal failure")

    @server.tool(
        description="Asks for confirmation before deleting a file",
        input_schema={"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]},
        task_support="optional",
    )
    async def confirm_delete(ctx: Context, filename: str) -> str:
        answer = await ctx.elicit(_form(f"Delete {filename}?", {"confirm": {"type": "boolean"}}, ["confirm"]))
        content = accepted_content(answer)
        return f"Deleted {filename}" if content and content.get("confirm") else f"Kept {filename}"

    @server.tool(description="Asks two questions at once", input_schema=NO_ARGS, task_support="optional")
    async def multi_input(ctx: Context) -> str:
        name, _ = await ctx.ask_all(
            [
                ("elicitation/create", _form("Your name?", {"name": {"type": "string"}})),
                ("elicitation/create", _form("Proceed?", {"confirm": {"type": "boolean"}})),
            ]
        )
        content = accepted_content(name) or {}
        return f"Got both answers ({content.get('name', '?')})"

    @server.tool(
        description="Asks for a name (an MRTR round), then greets as a task",
        input_schema=NO_ARGS,
        task_support="required",
    )
    def test_tool_with_task(ctx: Context) -> Any:
        content = accepted_content(ctx.input_responses.get("user_name"))
        if content is None or "name" not in content:
            return InputRequired().elicit(
                "user_name", _form("What is your name?", {"name": {"type": "string"}}, ["name"])
            )
        return f"Hello, {content['name']}!"
