"""`@server.middleware`: an allow-list refusing with an error or an isError result, a
per-principal rate limit, an audit log reading each outcome, in both protocol eras; a
middleware that fails refuses its request, and the server keeps serving."""

from __future__ import annotations

import asyncio

import pytest
from toolwire import CallNext, Outcome, ProtocolError, Request, Server, ToolError
from toolwire.testing import McpError, connect


def audited_server(log: list[tuple[str, str | None, str, int | None]], audited: asyncio.Event) -> Server:
    server = Server("guarded")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def wipe() -> str:
        return "wiped"

    @server.tool()
    def fail() -> str:
        raise ValueError("broken")

    @server.middleware
    async def allow_list(request: Request, call_next: CallNext) -> None:
        if request.name == "wipe":
            raise ToolError("wipe is not allowed here")
        if request.method == "prompts/list":
            raise ProtocolError(-32001, "Forbidden: no prompts for you")
        await call_next()

    @server.middleware
    async def audit(request: Request, call_next: CallNext) -> None:
        outcome: Outcome = await call_next()
        assert outcome.elapsed >= 0
        log.append((request.method, request.name, outcome.kind, outcome.code))
        audited.set()

    return server


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_middlewares_refuse_and_observe(protocol_version: str) -> None:
    log: list[tuple[str, str | None, str, int | None]] = []
    audited = asyncio.Event()
    server = audited_server(log, audited)
    async with connect(server, protocol_version=protocol_version) as client:

        async def call(name: str, arguments: dict | None = None) -> dict:
            audited.clear()
            result = await client.call_tool(name, arguments or {})
            await audited.wait()
            return result

        assert (await call("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
        refused = await client.call_tool("wipe")
        assert refused["isError"] is True
        assert refused["content"] == [{"type": "text", "text": "wipe is not allowed here"}]
        assert (await call("fail"))["isError"] is True
        with pytest.raises(McpError) as forbidden:
            await client.list_prompts()
        assert (forbidden.value.code, forbidden.value.message) == (-32001, "Forbidden: no prompts for you")
    # The audit middleware heard what reached it (refusals by the allow-list never do).
    assert ("tools/call", "echo", "result", None) in log
    assert ("tools/call", "fail", "tool_error", None) in log
    assert not any(name == "wipe" for _, name, _, _ in log)


async def test_a_rate_limit_per_principal_and_a_failing_middleware() -> None:
    server = Server("limited")
    calls: dict[str, int] = {}

    @server.tool()
    def ping_tool() -> str:
        return "pong"

    @server.middleware
    async def rate_limit(request: Request, call_next: CallNext) -> None:
        key = request.principal or "anonymous"
        calls[key] = calls.get(key, 0) + 1
        if calls[key] > 2:
            raise ProtocolError(-32029, f"Too many requests from {key}")
        await call_next()

    async with connect(server) as client:
        assert (await client.call_tool("ping_tool"))["content"][0]["text"] == "pong"
        assert (await client.call_tool("ping_tool"))["content"][0]["text"] == "pong"
        with pytest.raises(McpError) as limited:
            await client.call_tool("ping_tool")
        assert limited.value.code == -32029 and "anonymous" in limited.value.message

    broken = Server("broken")

    @broken.tool()
    def hello() -> str:
        return "hello"

    @broken.middleware
    async def faulty(request: Request, call_next: CallNext) -> None:
        if request.name == "hello":
            raise RuntimeError("the rule's database is down")
        await call_next()

    @broken.middleware
    async def forgetful(request: Request, call_next: CallNext) -> None:
        if request.method == "resources/list":
            return  # never lets it through
        await call_next()

    async with connect(broken) as client:
        with pytest.raises(McpError) as failed:
            await client.call_tool("hello")
        assert failed.value.code == -32603 and "faulty failed" in failed.value.message
        with pytest.raises(McpError) as dropped:
            await client.list_resources()
        assert "forgetful returned without calling call_next()" in dropped.value.message
        # The server keeps serving.
        assert [tool["name"] for tool in await client.list_tools()] == ["hello"]


def test_a_middleware_must_be_async() -> None:
    server = Server("t")

    def sync_rule(request: Request, call_next: CallNext) -> None:
        pass

    with pytest.raises(TypeError, match="async def sync_rule"):
        server.middleware(sync_rule)  # type: ignore[arg-type]


async def test_an_earlier_middleware_hears_a_later_ones_refusal() -> None:
    server = Server("layers")
    heard: list[Outcome] = []
    done = asyncio.Event()

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.middleware
    async def audit(request: Request, call_next: CallNext) -> None:
        heard.append(await call_next())
        done.set()

    @server.middleware
    async def deny(request: Request, call_next: CallNext) -> None:
        raise ProtocolError(-32001, "Forbidden")

    async with connect(server) as client:
        with pytest.raises(McpError):
            await client.call_tool("echo", {"text": "x"})
        await done.wait()
    assert heard[0].kind == "refused" and heard[0].elapsed >= 0


def test_request_is_the_old_name_of_request_info() -> None:
    from toolwire import RequestInfo

    assert Request is RequestInfo
    assert RequestInfo.__name__ == "RequestInfo"
