"""The forecast server of issue #28, written once as a user of the official Python SDK writes
it (pydantic `Field` limits and descriptions, a pydantic result, progress, an error, a lifespan
reached from a tool and a resource, a prompt): `forecast/toolwire_app.py` for toolwire and
`forecast/sdk_app.py` for the SDK, the same code but for the lines marked `# differs`. Its
tools/list is compared with the SDK's (`forecast/tools_list.json`, whose `$comment` says what
differs and why), and it is tested with toolwire's typed client only."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "forecast"
sys.path.insert(0, str(HERE))

import sdk_app  # noqa: E402
import toolwire_app  # noqa: E402
from toolwire.testing import connect  # noqa: E402

GOLDEN = json.loads((HERE / "tools_list.json").read_text(encoding="utf-8"))


def code(path: Path) -> list[str]:
    """A file's lines without its module docstring and without the lines marked `# differs`."""
    text = re.sub(r'\A""".*?"""\n', "", path.read_text(encoding="utf-8"), flags=re.S)
    return [line for line in text.splitlines() if not line.endswith("# differs")]


def without_titles(schema: Any) -> Any:
    """A schema without the `title` keywords pydantic derives from names."""
    if isinstance(schema, dict):
        return {k: without_titles(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
    if isinstance(schema, list):
        return [without_titles(item) for item in schema]
    return schema


def test_the_two_servers_are_the_same_code() -> None:
    assert code(HERE / "toolwire_app.py") == code(HERE / "sdk_app.py")


@pytest.mark.asyncio
async def test_tools_list_matches_the_golden_files_and_the_sdk() -> None:
    sdk = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await sdk_app.server.list_tools()]
    async with connect(toolwire_app.server) as client:
        ours = await client.list_tools()
    # Each as recorded: a change in the SDK or in toolwire shows here first.
    assert sdk == GOLDEN["sdk"]
    assert ours == GOLDEN["toolwire"]
    # And the difference is only the one explained in the golden file's $comment.
    [sdk_tool], [our_tool] = sdk, ours
    assert our_tool["outputSchema"] == sdk_tool["outputSchema"]
    assert our_tool["inputSchema"] == without_titles(sdk_tool["inputSchema"])
    rest = ("name", "description", "outputSchema")
    assert {k: our_tool.get(k) for k in rest} == {k: sdk_tool.get(k) for k in rest}
    assert set(our_tool) == set(sdk_tool)


@pytest.mark.asyncio
async def test_the_forecast_server_with_the_typed_client() -> None:
    lifespan_value = None
    async with connect(toolwire_app.server) as client:
        progress: list[tuple[float, Any, Any]] = []
        result = await client.call_tool(
            "forecast", {"city": "Oslo", "days": 2}, progress_callback=lambda *p: progress.append(p)
        )
        assert result.get("isError") is not True
        assert result["structuredContent"] == {"city": "Oslo", "station": "Blindern", "highs": [20.0, 21.0]}
        assert progress == [(1, 2, "day 1"), (2, 2, "day 2")]

        # The limits are enforced, the refusal names the argument.
        refused = await client.call_tool("forecast", {"city": "Oslo", "days": 9})
        assert refused["isError"] is True
        assert "/days" in refused["content"][0]["text"]
        empty = await client.call_tool("forecast", {"city": ""})
        assert empty["isError"] is True and "/city" in empty["content"][0]["text"]

        # The error path: the model reads the message.
        unknown = await client.call_tool("forecast", {"city": "Atlantis"})
        assert unknown["isError"] is True
        assert unknown["content"][0]["text"] == "No station for Atlantis"

        # The lifespan's value, from a resource.
        [template] = await client.list_resource_templates()
        assert template["uriTemplate"] == "weather://stations/{country}"
        read = await client.read_resource("weather://stations/fr")
        [contents] = read["contents"]
        assert contents == {"uri": "weather://stations/fr", "mimeType": "text/plain", "text": "paris: Montsouris"}

        [prompt] = await client.list_prompts()
        assert prompt["arguments"] == [
            {"name": "city", "required": True},
            {"name": "days", "required": False},
        ]
        rendered = await client.get_prompt("plan_trip", {"city": "Oslo"})
        assert rendered["messages"][0]["content"]["text"] == "Plan 3 days in Oslo around the forecast."
        lifespan_value = toolwire_app.server._lifespan.value
        assert lifespan_value is not None and not lifespan_value.closed
    # The lifespan ended with the session: its clean-up ran.
    assert lifespan_value.closed
