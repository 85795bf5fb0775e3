"""The conformance server with Python handlers: the tools, resources and prompts the official MCP
conformance suite (`@modelcontextprotocol/conformance`) exercises, with the answers it expects.

Run it with `examples/run-demo python --conformance --http PORT`.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from toolwire import Audio, Context, EmbeddedResource, Image, Server, Text, ToolError, ToolResult
from toolwire_conformance_modern import add_modern_fixtures
from toolwire_conformance_tasks import add_task_fixtures
from toolwire_greeter import add_greeter

RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
SILENT_WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def _strings(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}


async def _elicit_and_report(ctx: Context, params: dict[str, Any], prefix: str) -> str:
    answer = await ctx.elicit(params)
    return f"{prefix}action={answer.get('action')}, content={json.dumps(answer.get('content'))}"


def build_conformance_server(**options: Any) -> Server:
    """The conformance server; `options` are `Server`'s (`redis`, `request_state_keys`: a replica)."""
    server = Server("toolwire-conformance", "0.1.0", **options)

    @server.tool(description="Returns simple text", input_schema=NO_ARGS)
    def test_simple_text() -> str:
        return "This is a simple text response for testing."

    @server.tool(description="Returns an image", input_schema=NO_ARGS)
    def test_image_content() -> ToolResult:
        return ToolResult([Image(RED_PIXEL_PNG, "image/png")])

    @server.tool(description="Returns audio", input_schema=NO_ARGS)
    def test_audio_content() -> ToolResult:
        return ToolResult([Audio(SILENT_WAV, "audio/wav")])

    @server.tool(description="Returns an embedded resource", input_schema=NO_ARGS)
    def test_embedded_resource() -> ToolResult:
        return ToolResult(
            [
                EmbeddedResource(
                    "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
                )
            ]
        )

    @server.tool(description="Returns text, an image and a resource", input_schema=NO_ARGS)
    def test_multiple_content_types() -> ToolResult:
        return ToolResult(
            [
                Text("Multiple content types test:"),
                Image(RED_PIXEL_PNG, "image/png"),
                EmbeddedResource(
                    "test://mixed-content-resource", text='{"test":"data","value":123}', mime_type="application/json"
                ),
            ]
        )

    @server.tool(description="Logs three messages while it runs", input_schema=NO_ARGS)
    async def test_tool_with_logging(ctx: Context) -> str:
        ctx.info("Tool execution started")
        await asyncio.sleep(0.05)
        ctx.info("Tool processing data")
        await asyncio.sleep(0.05)
        ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool(description="Always fails", input_schema=NO_ARGS)
    def test_error_handling() -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(description="Reports progress 0, 50, 100 of 100", input_schema=NO_ARGS)
    async def test_tool_with_progress(ctx: Context) -> str:
        for done in (0, 50, 100):
            await ctx.progress(done, 100)
            if done < 100:
                await asyncio.sleep(0.05)
        return "Tool with progress executed successfully"

    @server.tool(description="Asks the client's model", input_schema=_strings("prompt"))
    async def test_sampling(ctx: Context, prompt: str) -> str:
        answer = await ctx.sample(
            {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}
        )
        return f"LLM response: {answer.get('content', {}).get('text', '')}"

    @server.tool(description="Asks the user", input_schema=_strings("message"))
    async def test_elicitation(ctx: Context, message: str) -> str:
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        return await _elicit_and_report(ctx, {"message": message, "requestedSchema": schema}, "User response: ")

    @server.tool(description="Elicitation with defaults", input_schema=NO_ARGS)
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified", "default": True},
            },
        }
        params = {"message": "Please review and update the form fields with defaults", "requestedSchema": schema}
        return await _elicit_and_report(ctx, params, "Elicitation completed: ")

    @server.tool(description="Elicitation with every enum form", input_schema=NO_ARGS)
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        def titled(prefix: str, word: str) -> list[dict[str, str]]:
            return [
                {"const": f"{prefix}{i}", "title": f"{w} {word}"}
                for i, w in ((1, "First"), (2, "Second"), (3, "Third"))
            ]

        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": titled("value", "Option")},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {"type": "array", "items": {"anyOf": titled("value", "Choice")}},
            },
        }
        params = {"message": "Please select options from the enum fields", "requestedSchema": schema}
        return await _elicit_and_report(ctx, params, "Elicitation completed: ")

    @server.tool(
        description="Tool with JSON Schema 2020-12 features",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": False,
        },
    )
    def json_schema_2020_12_tool(**arguments: Any) -> str:
        return json.dumps(arguments)

    @server.tool(description="Closes its SSE stream mid-call; the answer comes on resumption", input_schema=NO_ARGS)
    async def test_reconnection(ctx: Context) -> str:
        await asyncio.sleep(0.05)
        ctx.close_sse_stream()
        await asyncio.sleep(0.2)
        return "Reconnection test completed"

    @server.resource(
        "test://static-text", name="Static text", description="A static text resource", mime_type="text/plain"
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="Static binary", description="A static PNG", mime_type="image/png")
    def static_binary() -> dict[str, Any]:
        return {"blob": RED_PIXEL_PNG}

    @server.resource(
        "test://watched-resource", name="Watched", description="A resource to subscribe to", mime_type="text/plain"
    )
    def watched() -> str:
        return "Watched resource content"

    @server.resource(
        "test://template/{id}/data", name="Template data", description="Data for an id", mime_type="application/json"
    )
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.prompt(description="A prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(description="A prompt with two arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt embedding a resource")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # noqa: N803 (the suite's name)
        return [
            EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"),
            "Please process the embedded resource above.",
        ]

    @server.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[Any]:
        return [Image(RED_PIXEL_PNG, "image/png"), "Please analyze the image above."]

    @server.completion(prompt="test_prompt_with_arguments")
    def complete_arguments(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [c for c in ("paris", "park", "party", "test", "testing") if c.startswith(value)]

    # The Skills extension's scenarios read the example skills.
    server.load_skills(example_skills_dir())
    # MCP Apps: the greeter example (examples/apps), for the browser test.
    add_greeter(server)
    add_modern_fixtures(server)
    add_task_fixtures(server)
    return server


def example_skills_dir() -> Path:
    """examples/skills, or where TOOLWIRE_SKILLS_DIR says."""
    return Path(os.environ.get("TOOLWIRE_SKILLS_DIR") or Path(__file__).resolve().parent.parent / "skills")
