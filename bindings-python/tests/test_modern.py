"""2026-07-28 from Python: a tool answers `InputRequired` or asks with `await ctx.elicit(...)`
(replayed each round), `InputRequiredError` gets past `except Exception`, prompts read their
`Round`, and the request's own capabilities, state and trace context reach the tool."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Client
from toolwire import Context, InputRequired, InputRequiredError, Round, Server

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
}
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def modern_call(client: Any, id: int, name: str, **extra: Any) -> Any:
    params = {"name": name, "arguments": {}, "_meta": extra.pop("meta", META), **extra}
    client.send({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    return client.recv()


def build() -> Server:
    server = Server("modern", "1")

    @server.tool(input_schema=NO_ARGS)
    def stateful(ctx: Context) -> Any:
        if ctx.request_state == "step-1" and "ok" in ctx.input_responses:
            return "done"
        return InputRequired().elicit("ok", {"message": "OK?"}).with_state("step-1")

    @server.tool(input_schema=NO_ARGS)
    async def greet(ctx: Context) -> str:
        try:
            answer = await ctx.elicit({"message": "Name?"})
        except Exception:  # noqa: BLE001 (the point: this cannot swallow the signal)
            return "swallowed"
        return f"hello {answer['content']['name']}"

    @server.tool(input_schema=NO_ARGS)
    async def pair(ctx: Context) -> str:
        name, sampled = await ctx.ask_all(
            [
                ("elicitation/create", {"message": "Name?"}),
                ("sampling/createMessage", {"messages": [], "maxTokens": 5}),
            ]
        )
        return f"{name['content']['name']} / {sampled['content']['text']}"

    @server.tool(input_schema=NO_ARGS)
    async def odd(ctx: Context) -> str:
        try:
            await ctx.ask_all([("tools/list", {})])
        except ValueError as refused:
            return str(refused)
        return "asked"

    @server.tool(input_schema=NO_ARGS)
    def trace(ctx: Context) -> str:
        return ctx.trace_context["traceparent"] or "none"

    @server.prompt()
    def ask(answers: Round) -> Any:
        context = answers.input_responses.get("ctx")
        if context:
            return f"context: {context['content']['v']}"
        return InputRequired().elicit("ctx", {"message": "Context?"})

    return server


def test_a_tool_returns_input_required_and_reads_its_state() -> None:
    client = Client(build())
    first = modern_call(client, 1, "stateful")
    assert first["result"]["resultType"] == "input_required"
    assert first["result"]["inputRequests"]["ok"]["method"] == "elicitation/create"
    state = first["result"]["requestState"]
    assert state != "step-1", "sealed"
    done = modern_call(client, 2, "stateful", inputResponses={"ok": {"action": "accept"}}, requestState=state)
    assert done["result"]["content"][0]["text"] == "done"
    tampered = modern_call(client, 3, "stateful", inputResponses={"ok": {"action": "accept"}}, requestState=state + "x")
    assert tampered["error"] == {"code": -32602, "message": "Invalid or expired requestState"}


def test_elicit_is_replayed_and_its_signal_is_not_swallowed() -> None:
    assert not issubclass(InputRequiredError, Exception)
    client = Client(build())
    first = modern_call(client, 1, "greet")
    assert first["result"]["resultType"] == "input_required", first
    (key,) = first["result"]["inputRequests"]
    second = modern_call(client, 2, "greet", inputResponses={key: {"action": "accept", "content": {"name": "Ann"}}})
    assert second["result"]["content"][0]["text"] == "hello Ann"


def test_ask_all_asks_every_question_in_one_round() -> None:
    client = Client(build())
    first = modern_call(client, 1, "pair")
    asked = first["result"]["inputRequests"]
    assert sorted(request["method"] for request in asked.values()) == [
        "elicitation/create",
        "sampling/createMessage",
    ], first
    answers = {
        key: {"action": "accept", "content": {"name": "Ann"}}
        if request["method"] == "elicitation/create"
        else {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
        for key, request in asked.items()
    }
    done = modern_call(client, 2, "pair", inputResponses=answers)
    assert done["result"]["content"][0]["text"] == "Ann / hi", done
    odd = modern_call(client, 3, "odd")
    assert '"tools/list" is not a question' in odd["result"]["content"][0]["text"], odd


def test_ask_all_sends_one_question_after_the_other_in_a_session(client_for: Any) -> None:
    client = client_for(build(), capabilities={"elicitation": {}, "sampling": {}})
    client.call(1, "pair")
    first = client.recv()
    assert first["method"] == "elicitation/create"
    client.send({"jsonrpc": "2.0", "id": first["id"], "result": {"action": "accept", "content": {"name": "Bo"}}})
    second = client.recv()
    assert second["method"] == "sampling/createMessage"
    sampled = {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}
    client.send({"jsonrpc": "2.0", "id": second["id"], "result": sampled})
    assert client.recv()["result"]["content"][0]["text"] == "Bo / yo"


def test_the_same_tool_waits_for_the_answer_in_a_legacy_session(client_for: Any) -> None:
    client = client_for(build(), capabilities={"elicitation": {}})
    client.call(1, "greet")
    request = client.recv()
    assert request["method"] == "elicitation/create"
    client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Bo"}}})
    assert client.recv()["result"]["content"][0]["text"] == "hello Bo"


def test_a_prompt_reads_its_round() -> None:
    client = Client(build())
    get = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "ask", "_meta": META}}
    client.send(get)
    first = client.recv()
    assert first["result"]["inputRequests"]["ctx"]["method"] == "elicitation/create"
    get["params"]["inputResponses"] = {"ctx": {"action": "accept", "content": {"v": "here"}}}
    client.send(get)
    assert client.recv()["result"]["messages"][0]["content"]["text"] == "context: here"


def test_the_trace_context_reaches_the_tool() -> None:
    client = Client(build())
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    answer = modern_call(client, 1, "trace", meta={**META, "traceparent": traceparent})
    assert answer["result"]["content"][0]["text"] == traceparent


def test_modern_options_are_checked_and_applied() -> None:
    with pytest.raises(ValueError, match="cache scope"):
        Server("s", cache_scope="shared")
    with pytest.raises(ValueError, match="too short"):
        Server("s", request_state_keys=["short"])
    server = Server("s", cache_ttl_ms=5000, cache_scope="public", request_state_keys=["k" * 32], modern_only=True)
    client = Client(server)
    client.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
    result = client.recv()["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (5000, "public")
    client.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
    assert client.recv()["error"]["code"] == -32022
