"""The README's Python example runs and does what the README says."""

from __future__ import annotations

import re
import runpy

from conftest import ROOT, Client


def test_readme_example(tmp_path) -> None:
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"```python\n(.*?)```", readme, re.S)
    assert example, "the README has a Python example"
    path = tmp_path / "example.py"
    path.write_text(example.group(1))
    server = runpy.run_path(str(path), run_name="readme_example")["server"]
    client = Client(server)
    client.initialize()

    def answer(id_: int) -> dict:
        while True:
            message = client.recv()
            if message.get("id") == id_:
                return message

    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    tools = {t["name"]: t for t in answer(1)["result"]["tools"]}
    assert tools["forecast"]["inputSchema"]["required"] == ["city"]
    assert tools["forecast"]["outputSchema"]["required"] == ["city", "celsius"]
    client.call(2, "forecast", {"city": "Paris", "days": 2})
    assert answer(2)["result"]["structuredContent"] == {"city": "Paris", "celsius": [20, 21]}
    client.call(3, "shout", {"text": "hi"})
    assert answer(3)["result"]["content"][0]["text"] == "HI"
    client.call(4, "forecast", {"city": "Paris", "days": 9})
    assert answer(4)["result"] == {"content": [{"type": "text", "text": "at most 7 days"}], "isError": True}
