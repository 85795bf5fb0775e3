"""The conformance server's 2026-07-28 fixtures with Python handlers: MRTR rounds written both
ways (returning `InputRequired`, and `await ctx.elicit(...)` that asks and comes back), the
per-request capability and log level, the list-change triggers, and a tool whose argument is
mirrored in an `Mcp-Param-Region` header.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from toolwire import Context, InputRequired, Round, Server

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def _ask(message: str, field: str, kind: str = "string") -> dict[str, Any]:
    return {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
    }


def _sampling(text: str, max_tokens: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}


def accepted_content(answer: Any) -> Optional[dict[str, Any]]:
    """An elicitation answer's content, if the user accepted."""
    if isinstance(answer, dict) and answer.get("action") == "accept":
        return answer.get("content") or {}
    return None


def _accepted(responses: dict[str, Any], key: str) -> Optional[dict[str, Any]]:
    return accepted_content(responses.get(key))


def add_modern_fixtures(server: Server) -> None:
    @server.tool(description="Needs the client's sampling capability", input_schema=NO_ARGS)
    async def test_missing_capability(ctx: Context) -> str:
        if "sampling" in ctx.client_capabilities:
            return "Client declared sampling capability; proceeding."
        # Without it the engine answers -32021 (2026-07-28) or an error result.
        await ctx.sample(_sampling("Hello", 10))
        return "unreachable"

    @server.tool(description="Asks for confirmation through the protocol of the request", input_schema=NO_ARGS)
    async def test_streaming_elicitation(ctx: Context) -> str:
        answer = await ctx.elicit(_ask("Please confirm", "confirmed", "boolean"))
        return f"confirmation: {answer.get('action')}"

    @server.tool(description="Logs three messages at the level the request asked for", input_schema=NO_ARGS)
    def test_logging_tool(ctx: Context) -> str:
        ctx.debug("debug message")
        ctx.info("info message")
        ctx.warning("warning message")
        return "Logging tool executed"

    @server.tool(
        description="Echoes a region that is mirrored in the Mcp-Param-Region header",
        input_schema={
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "Mirrored into the Mcp-Param-Region header",
                    "x-mcp-header": "Region",
                }
            },
        },
    )
    def test_x_mcp_header(region: str = "<none>") -> str:
        return f"region={region}"

    @server.tool(description="Asks the user's name (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_elicitation(ctx: Context) -> Any:
        content = _accepted(ctx.input_responses, "user_name")
        if content and isinstance(content.get("name"), str):
            return f"Hello, {content['name']}!"
        return InputRequired().elicit("user_name", _ask("What is your name?", "name"))

    @server.tool(description="Asks the client's model (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_sampling(ctx: Context) -> Any:
        answer = ctx.input_responses.get("capital_question")
        if answer:
            return f"Model said: {answer.get('content', {}).get('text', '')}"
        return InputRequired().sample("capital_question", _sampling("What is the capital of France?", 100))

    @server.tool(description="Asks for the client's roots (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_list_roots(ctx: Context) -> Any:
        answer = ctx.input_responses.get("client_roots")
        if answer and isinstance(answer.get("roots"), list):
            return f"Client exposed {len(answer['roots'])} root(s)."
        return InputRequired().list_roots("client_roots")

    @server.tool(description="Carries state between rounds (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_request_state(ctx: Context) -> Any:
        if _accepted(ctx.input_responses, "confirm") is not None and ctx.request_state == "awaiting-confirm":
            return "state-ok: confirmed"
        return InputRequired().elicit("confirm", _ask("Please confirm", "ok", "boolean")).with_state("awaiting-confirm")

    @server.tool(description="Asks three questions in one round (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_multiple_inputs(ctx: Context) -> Any:
        keys = ("user_name", "greeting", "client_roots")
        if all(k in ctx.input_responses for k in keys) and ctx.request_state == "multi":
            return "All inputs received."
        return (
            InputRequired()
            .elicit("user_name", _ask("What is your name?", "name"))
            .sample("greeting", _sampling("Generate a greeting", 50))
            .list_roots("client_roots")
            .with_state("multi")
        )

    @server.tool(description="Asks two questions, one per round (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_multi_round(ctx: Context) -> Any:
        state = json.loads(ctx.request_state) if ctx.request_state else {}
        color = (_accepted(ctx.input_responses, "step2") or {}).get("color")
        if isinstance(state.get("name"), str) and isinstance(color, str):
            return f"{state['name']} likes {color}."
        name = (_accepted(ctx.input_responses, "step1") or {}).get("name")
        if isinstance(name, str):
            ask = _ask("Step 2: What is your favorite color?", "color")
            return InputRequired().elicit("step2", ask).with_state(json.dumps({"name": name}))
        ask = _ask("Step 1: What is your name?", "name")
        return InputRequired().elicit("step1", ask).with_state(json.dumps({"step": 1}))

    @server.tool(description="Refuses a state that was altered (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_tampered_state(ctx: Context) -> Any:
        if _accepted(ctx.input_responses, "confirm") is not None and ctx.request_state == "untampered":
            return "state verified"
        return InputRequired().elicit("confirm", _ask("Please confirm", "ok", "boolean")).with_state("untampered")

    @server.tool(description="Asks only what the client can answer (MRTR)", input_schema=NO_ARGS)
    def test_input_required_result_capabilities(ctx: Context) -> Any:
        if "sample" in ctx.input_responses or "ask" in ctx.input_responses:
            return "Answered."
        # The engine also leaves out kinds the request did not declare.
        return (
            InputRequired()
            .sample("sample", _sampling("Say hello", 50))
            .elicit("ask", _ask("Please confirm", "ok", "boolean"))
        )

    @server.prompt(description="A prompt that asks for context first (MRTR)")
    def test_input_required_result_prompt(answers: Round) -> Any:
        content = _accepted(answers.input_responses, "user_context")
        if content and isinstance(content.get("context"), str):
            return f"Use the following context: {content['context']}"
        return InputRequired().elicit("user_context", _ask("What context should the prompt use?", "context"))

    # Not a harness fixture: the pool test updates a resource on one replica and listens on the others.
    @server.tool(
        description="Announces that the resource `uri` changed: listeners hear notifications/resources/updated",
        input_schema={"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
    )
    def test_update_resource(uri: str) -> str:
        server.notify_resource_updated(uri)
        return f"updated {uri}"

    @server.tool(description="Adds and removes a tool: listeners hear tools/list_changed", input_schema=NO_ARGS)
    def test_trigger_tool_change() -> str:
        def test_dynamic_tool() -> str:
            return "dynamic"

        server.add_tool(test_dynamic_tool, description="Here for a moment", input_schema=NO_ARGS)
        server.remove_tool("test_dynamic_tool")
        return "tool list changed"

    @server.tool(description="Adds and removes a prompt: listeners hear prompts/list_changed", input_schema=NO_ARGS)
    def test_trigger_prompt_change() -> str:
        def test_dynamic_prompt() -> str:
            return "dynamic"

        server.add_prompt(test_dynamic_prompt, description="Here for a moment")
        server.remove_prompt("test_dynamic_prompt")
        return "prompt list changed"
