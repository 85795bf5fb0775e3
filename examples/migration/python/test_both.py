"""The official SDK's server (sdk_server.py) and its toolwire port (toolwire_server.py), each
spawned over stdio and driven by the official SDK's own client in both protocol eras, answer
alike; where they differ, the assertion says how and the comment why.

Run it beside the two servers: `pip install mcp toolwire pytest pytest-asyncio`, then `pytest`."""

import difflib
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters

HERE = Path(__file__).parent
SEARCH = {"query": "dune"}


async def outcome(request: Any) -> Any:
    """The request's result, or the JSON-RPC error it was answered with."""
    try:
        return await request
    except MCPError as error:
        return error


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema without the `title` pydantic puts on the root and on each property."""
    bare = {key: value for key, value in schema.items() if key != "title"}
    if "properties" in bare:
        bare["properties"] = {name: untitled(value) for name, value in bare["properties"].items()}
    return bare


async def answers(script: str, mode: str) -> dict[str, Any]:
    """What the server answers to the same requests; `mode` is the SDK client's era: "legacy"
    (2025-11-25, with the initialize handshake) or "2026-07-28" (stateless)."""
    got: dict[str, Any] = {"progress": [], "logs": []}

    async def on_progress(done: float, total: Any, message: Any) -> None:
        got["progress"].append((done, total, message))

    async def on_log(params: Any) -> None:
        got["logs"].append(params.data)

    server = StdioServerParameters(command=sys.executable, args=[str(HERE / script)])
    # 2026-07-28 sends a request log messages only if it asks for them, which log_level does.
    level = None if mode == "legacy" else "info"
    async with Client(server, mode=mode, log_level=level, logging_callback=on_log) as client:
        got["version"] = client.protocol_version
        got["tools"] = (await client.list_tools()).tools
        got["search"] = await client.call_tool("search", SEARCH)
        got["too_many"] = await client.call_tool("search", {**SEARCH, "limit": 99})
        got["a_string"] = await client.call_tool("search", {**SEARCH, "limit": "2"})
        got["unknown_tool"] = await outcome(client.call_tool("borrow", {}))
        got["reindex"] = await client.call_tool("reindex", {"shelves": 3}, progress_callback=on_progress)
        got["read"] = await client.read_resource("books://9780441013593")
        got["missing_book"] = await outcome(client.read_resource("books://0"))
        got["prompt"] = await client.get_prompt("review", {"title": "Dune"})
        got["missing_argument"] = await outcome(client.get_prompt("review", {}))
        if mode == "legacy":
            got["info"], got["capabilities"] = client.server_info, client.server_capabilities
            with warnings.catch_warnings():  # the client says the logging capability is deprecated
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                got["set_level"] = await outcome(client.set_logging_level("info"))
    return got


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_both_servers_answer_alike(mode: str) -> None:
    sdk = await answers("sdk_server.py", mode)
    ours = await answers("toolwire_server.py", mode)
    assert sdk["version"] == ours["version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")

    # tools/list: the same tools, descriptions and arguments. The SDK lists them in the order they
    # were registered, toolwire by name (a stable order, as 2026-07-28 asks for caching).
    assert [tool.name for tool in sdk["tools"]] == ["search", "reindex"]
    assert [tool.name for tool in ours["tools"]] == ["reindex", "search"]
    sdk_tools = {tool.name: tool for tool in sdk["tools"]}
    for tool in ours["tools"]:
        assert tool.description == sdk_tools[tool.name].description
        # The same schema, the limits of `Field(3, ge=1, le=10, ...)` included; pydantic adds a
        # `title` to the root ("searchArguments") and to each property ("Limit"), toolwire none.
        assert untitled(sdk_tools[tool.name].input_schema) == tool.input_schema
        # A `-> str` tool: the SDK also declares an output schema and sends the string again as
        # `{"result": ...}` structured content; toolwire sends the text alone (it gives
        # structured content for a dict, dataclass, TypedDict or pydantic model).
        assert sdk_tools[tool.name].output_schema["properties"] == {"result": {"title": "Result", "type": "string"}}
        assert tool.output_schema is None
    assert sdk["search"].content == ours["search"].content and ours["search"].content[0].text == "Dune"
    assert sdk["search"].structured_content == {"result": "Dune"} and ours["search"].structured_content is None

    # Arguments past a limit: an isError result in both, so the model can correct itself;
    # pydantic's words in the SDK, the JSON Pointer of each violation in toolwire.
    assert sdk["too_many"].is_error and "less than or equal to 10" in sdk["too_many"].content[0].text
    assert ours["too_many"].is_error
    assert "/limit: 99 is greater than the maximum of 10" in ours["too_many"].content[0].text
    # A number sent as a string: pydantic (lax mode) converts "2" to 2 and runs the tool;
    # toolwire checks the arguments against the schema the tool declared, which says integer.
    assert not sdk["a_string"].is_error and sdk["a_string"].content[0].text == "Dune"
    assert ours["a_string"].is_error and '/limit: "2" is not of type "integer"' in ours["a_string"].content[0].text
    # An unknown tool: an isError result from the SDK, a JSON-RPC error (-32602) from toolwire, as
    # the specification's example has it.
    assert sdk["unknown_tool"].is_error and sdk["unknown_tool"].content[0].text == "Unknown tool: borrow"
    assert (ours["unknown_tool"].code, ours["unknown_tool"].message) == (-32602, "Unknown tool: borrow")

    # Progress, a log message, and the lifespan's value read by the tool: the same.
    assert sdk["reindex"].content == ours["reindex"].content
    assert ours["reindex"].content[0].text == "2 books on 3 shelves"
    assert sdk["progress"] == ours["progress"] == [(1, 3, "shelf 1"), (2, 3, "shelf 2"), (3, 3, "shelf 3")]
    assert sdk["logs"] == ours["logs"] == ["reindexed 3 shelves"]

    # A resource template read: the same contents.
    assert sdk["read"].contents == ours["read"].contents
    assert ours["read"].contents[0].text == "Dune" and ours["read"].contents[0].mime_type == "text/plain"
    # A missing resource: the SDK answers -32602 with the exception's text in both eras; toolwire
    # -32002 in 2025-11-25 and -32602 in 2026-07-28 (which retired -32002), "Resource not found".
    assert (sdk["missing_book"].code, sdk["missing_book"].message) == (-32602, "no book 0")
    not_found = -32002 if mode == "legacy" else -32602
    assert (ours["missing_book"].code, ours["missing_book"].message) == (not_found, "Resource not found")
    assert sdk["missing_book"].data == ours["missing_book"].data == {"uri": "books://0"}

    # A prompt: the same messages; the SDK repeats the prompt's description in the result.
    assert sdk["prompt"].messages == ours["prompt"].messages
    assert ours["prompt"].messages[0].content.text == "Write a friendly review of Dune in three sentences."
    assert sdk["prompt"].description == "Asks for a short review of a book." and ours["prompt"].description is None
    # A required prompt argument missing: toolwire checks it first (-32602, naming it); the SDK's
    # ValueError ("Missing required arguments") becomes code 0 in 2025-11-25, -32603 in 2026-07-28.
    assert sdk["missing_argument"].code == (0 if mode == "legacy" else -32603)
    assert ours["missing_argument"].code == -32602 and "title" in ours["missing_argument"].message

    if mode == "legacy":
        assert (sdk["info"].name, sdk["info"].version) == (ours["info"].name, ours["info"].version)
        sdk_caps, our_caps = sdk["capabilities"], ours["capabilities"]
        # Both serve tools, resources and prompts. toolwire also declares logging (the SDK sends
        # log messages without declaring it) and list changes and subscriptions, which it sends.
        assert sdk_caps.tools and sdk_caps.resources and sdk_caps.prompts
        assert sdk_caps.logging is None and our_caps.logging is not None
        assert not sdk_caps.tools.list_changed and our_caps.tools.list_changed
        assert not sdk_caps.resources.subscribe and our_caps.resources.subscribe
        # So `logging/setLevel`, which clients such as VS Code send, is a -32601 from the SDK.
        assert sdk["set_level"].code == -32601 and not isinstance(ours["set_level"], MCPError)


def test_the_port_changes_the_imports_the_constructor_and_one_name() -> None:
    def code(name: str) -> list[str]:  # the file without its docstring
        return (HERE / name).read_text().split('"""', 2)[2].splitlines()

    diff = difflib.ndiff(code("sdk_server.py"), code("toolwire_server.py"))
    changed = [line for line in diff if line.startswith(("- ", "+ "))]
    assert changed == [
        "- from mcp.server.mcpserver import Context, MCPServer",
        "- from mcp.server.mcpserver.exceptions import ResourceNotFoundError",
        "+ from toolwire import Context, ResourceNotFound, Server",
        "- async def lifespan(server: MCPServer) -> AsyncIterator[Library]:",
        "+ async def lifespan(server: Server) -> AsyncIterator[Library]:",
        '- mcp = MCPServer("library", version="1.0.0", lifespan=lifespan)',
        '+ mcp = Server("library", version="1.0.0", lifespan=lifespan)',
        '-         raise ResourceNotFoundError(f"no book {isbn}")',
        '+         raise ResourceNotFound(f"no book {isbn}")',
    ]
