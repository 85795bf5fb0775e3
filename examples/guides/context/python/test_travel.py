import pytest
from toolwire.testing import connect

from travel import server


@pytest.mark.asyncio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_book_asks_the_user_first(version: str) -> None:
    asked, progress = [], []

    def user(params: dict) -> dict:  # the client's elicitation handler: the user says yes
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    def on_progress(done: float, total: float, message: str) -> None:
        progress.append(message)

    async with connect(server, protocol_version=version, elicitation=user) as client:
        result = await client.call_tool("book", {"city": "Oslo", "nights": 2}, progress_callback=on_progress)
        logs = [n["params"]["data"] for n in client.notifications if n["method"] == "notifications/message"]

    assert result["content"][0]["text"] == "Booked 2 nights in Oslo."
    assert asked == ["Book 2 nights in Oslo for 480 EUR?"]
    # In 2026-07-28 a question ends the request and the client sends it again with the answer:
    # the handler runs twice, so what it does before asking, it does twice.
    rounds = 1 if version == "2025-11-25" else 2
    assert progress == ["searching", "comparing", "holding a room"] * rounds
    # Logs go at the server's default level (info) in 2025-11-25; 2026-07-28 sends them only to a
    # request that names its level (`_meta` "io.modelcontextprotocol/logLevel"), as this one does not.
    assert logs == ([{"searching": "Oslo"}] if version == "2025-11-25" else [])
