import pytest
from toolwire.testing import McpError, connect

from notes import server


@pytest.mark.asyncio
async def test_resources_prompts_and_completion() -> None:
    async with connect(server) as client:
        listed = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in listed] == ["notes://day/{date}"]

        read = await client.read_resource("notes://day/2026-11-23")
        assert read["contents"][0]["text"] == "Quiet."

        with pytest.raises(McpError) as missing:
            await client.read_resource("notes://day/1999-01-01")
        assert missing.value.code == -32002

        completed = await client.complete({"type": "ref/resource", "uri": "notes://day/{date}"}, "date", "2026-11-2")
        assert completed["values"] == ["2026-11-22", "2026-11-23"]

        prompt = await client.get_prompt("summarize", {"date": "2026-11-22"})
        assert prompt["messages"][0]["content"]["text"].startswith("Summarize the notes of 2026-11-22 (short)")

        tones = await client.complete({"type": "ref/prompt", "name": "summarize"}, "tone", "")
        assert tones["values"] == ["short", "detailed"]  # a Literal argument is completed for you
