"""Benchmark anchor: the official Python SDK's MCPServer (PyPI `mcp`), on stdio, or on
Streamable HTTP with `--http PORT` (sessions, JSON answers: its fastest stateful mode; uvicorn).

Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

# Warnings only: at info it logs a line per HTTP session, as toolwire's demos do not.
server = MCPServer("anchor-python", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Returns the text it is given."""
    return text


@server.tool()
async def sleep(ms: int) -> str:
    """Waits ms milliseconds."""
    await anyio.sleep(ms / 1000)
    return f"slept {ms} ms"


def _extra(q: str, n: int | None = None) -> str:
    return q


for i in range(100):
    server.add_tool(_extra, name=f"tool_{i:03d}", description=f"Extra tool number {i} (benchmarks tools/list).")


class Item(BaseModel):
    """An item of `give_structured` (bench/payloads)."""

    id: int
    name: str
    tags: list[str]


class Items(BaseModel):
    items: list[Item]


def _bench_tools() -> None:
    """The tools of bench/payloads (`--bench-tools`), as in toolwire's demos.

    MCPServer takes no raw JSON Schema for a tool's input: it derives the schema from the
    function's signature and validates arguments with Pydantic. So `validate_big`'s parameters
    are Pydantic models built from bench/schemas/big.json at start (`_models`), the closest this
    SDK comes to taking that schema; the schema it lists is Pydantic's rendering of them.
    """
    import inspect
    import json
    from pathlib import Path

    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "big.json").read_text())
    root = _models(schema)

    @server.tool(description="Answers the length in characters of the text it is given.")
    def take_text(text: str) -> str:
        return str(len(text))

    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    @server.tool(description="Answers a text of that many ASCII bytes.")
    def give_text(bytes: int) -> str:  # noqa: A002 (the argument's name in every server)
        return (alphabet * (bytes // len(alphabet) + 1))[:bytes]

    # A Pydantic model as the return type: this SDK's way to declare an output schema; it adds the
    # JSON text as a text block itself.
    @server.tool(description="Answers structured content of about that many bytes.")
    def give_structured(bytes: int) -> Items:  # noqa: A002
        tags = ["alpha", "beta", "gamma"]
        return Items(items=[Item(id=n, name=f"item-{n:06d}", tags=tags) for n in range(bytes // 64)])

    def validate_big(**arguments: object) -> str:
        return f"lines={len(arguments['order'].lines)}"  # type: ignore[attr-defined]

    # The root model's fields as the function's parameters, which is what MCPServer reads.
    validate_big.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=field.annotation,
                default=inspect.Parameter.empty if field.is_required() else None,
            )
            for name, field in root.model_fields.items()
        ]
    )
    validate_big.__annotations__ = {name: field.annotation for name, field in root.model_fields.items()} | {
        "return": str
    }
    server.add_tool(validate_big, description="Checks an order against a large schema; answers its line count.")

    @server.tool(description="A trivial schema; answers ok.")
    def validate_small(text: str) -> str:
        return "ok"


def _models(schema: dict) -> type:
    """Pydantic models for a JSON Schema object (the subset big.json uses: objects, arrays,
    strings with patterns and lengths, numbers with bounds, enums, `$ref`s into `$defs`).
    Not rendered: `uniqueItems` (Pydantic has no such constraint on a list)."""
    from typing import Annotated, Any, Literal, Optional

    from pydantic import ConfigDict, Field, StringConstraints, create_model

    defs = schema.get("$defs", {})
    built: dict[str, Any] = {}

    def to_type(node: dict, name: str) -> Any:
        if "$ref" in node:
            key = node["$ref"].rsplit("/", 1)[-1]
            if key not in built:
                built[key] = to_type(defs[key], key.title().replace("_", ""))
            return built[key]
        if "enum" in node:
            return Literal[tuple(node["enum"])]
        kind = node.get("type")
        if kind == "object":
            required = set(node.get("required", []))
            fields = {}
            for key, sub in node.get("properties", {}).items():
                tp = to_type(sub, name + key.title().replace("_", ""))
                fields[key] = (tp, ...) if key in required else (Optional[tp], None)
            extra = "forbid" if node.get("additionalProperties") is False else "allow"
            return create_model(name, __config__=ConfigDict(extra=extra), **fields)
        if kind == "array":
            item = to_type(node.get("items", {}), name + "Item")
            return Annotated[list[item], Field(min_length=node.get("minItems"), max_length=node.get("maxItems"))]
        if kind == "string":
            return Annotated[
                str,
                StringConstraints(
                    pattern=node.get("pattern"), min_length=node.get("minLength"), max_length=node.get("maxLength")
                ),
            ]
        bounds = Field(ge=node.get("minimum"), le=node.get("maximum"), gt=node.get("exclusiveMinimum"))
        if kind == "integer":
            return Annotated[int, bounds]
        if kind == "number":
            return Annotated[float, bounds]
        if kind == "boolean":
            return bool
        return Any

    return to_type(schema, "Order")


if __name__ == "__main__":
    import sys

    if "--bench-tools" in sys.argv:
        _bench_tools()

    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        anyio.run(lambda: server.run_streamable_http_async(port=port, json_response=True))
    else:
        server.run()
