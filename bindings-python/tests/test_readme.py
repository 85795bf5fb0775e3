"""The Python page's examples (docs/languages/python.md) run and do what the page says: the
server, and its test run by pytest as a user runs it."""

from __future__ import annotations

import re
import runpy

from conftest import ROOT, Client, run_pytest_in


def readme_python_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "languages" / "python.md").read_text(), re.S)
    assert len(blocks) == 2, "the Python page has a server and its test"
    return blocks


def test_readme_example(tmp_path) -> None:
    path = tmp_path / "weather.py"
    path.write_text(readme_python_blocks()[0])
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
    refused = answer(4)["result"]
    assert refused["isError"] is True and "/days" in refused["content"][0]["text"]
    client.call(5, "forecast", {"city": "Atlantis"})
    assert answer(5)["result"] == {"content": [{"type": "text", "text": "no station in Atlantis"}], "isError": True}


def test_readme_test_passes_under_pytest(tmp_path) -> None:
    server, test = readme_python_blocks()
    (tmp_path / "weather.py").write_text(server)
    (tmp_path / "test_weather.py").write_text(test)
    run = run_pytest_in(tmp_path, "test_weather.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
