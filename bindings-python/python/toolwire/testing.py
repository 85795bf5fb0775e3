"""A client for tests: drives a `Server` in process through core's in-memory session, as a real
client would, without JSON-RPC text in the test.

    async with connect(server) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"})

Both protocol eras: `protocol_version="2025-11-25"` (the default) initializes a session;
`"2026-07-28"` sends every request stand-alone with its `_meta`, and answers the server's
input-required rounds itself. Questions the server asks (elicitation, sampling, roots) go to the
callbacks given to `connect`, in either era.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Callable, Optional, Union

from ._server import Server, Session

__all__ = ["McpError", "TestClient", "connect"]

MODERN = "2026-07-28"
# More input-required rounds than any real tool needs: a loop, not a conversation.
_MAX_ROUNDS = 16

Answer = Callable[[dict[str, Any]], Union[dict[str, Any], Awaitable[dict[str, Any]]]]
Progress = Callable[[float, Optional[float], Optional[str]], Any]


class McpError(Exception):
    """The server answered a request with a JSON-RPC error (`error` is its error object)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('message')} ({error.get('code')})")
        self.error = error
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    *,
    protocol_version: str = "2025-11-25",
    elicitation: Optional[Answer] = None,
    sampling: Optional[Answer] = None,
    roots: Optional[list[dict[str, Any]]] = None,
    capabilities: Optional[dict[str, Any]] = None,
    client_info: Optional[dict[str, Any]] = None,
) -> AsyncIterator[TestClient]:
    """A connected `TestClient`; the session drains and ends when the block does.

    `elicitation(params)` and `sampling(params)` (sync or async) answer the server's
    `elicitation/create` and `sampling/createMessage`; `roots` is what `roots/list` returns.
    Each one given is declared in the client's capabilities (merged with `capabilities`).
    The server's `lifespan` is entered first and exited after the session ends.
    """
    # The server's lifespan around the session (its value reaches the handlers; exited at the end).
    async with server:
        client = TestClient(
            server.session(),
            protocol_version=protocol_version,
            elicitation=elicitation,
            sampling=sampling,
            roots=roots,
            capabilities=capabilities,
            client_info=client_info or {"name": "toolwire-test-client", "version": "1.0"},
        )
        await client._start()
        try:
            yield client
        finally:
            await client._close()


class TestClient:
    """One client session. Use `connect` to make one."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(
        self,
        session: Session,
        *,
        protocol_version: str,
        elicitation: Optional[Answer],
        sampling: Optional[Answer],
        roots: Optional[list[dict[str, Any]]],
        capabilities: Optional[dict[str, Any]],
        client_info: dict[str, Any],
    ) -> None:
        self._session = session
        self._loop = asyncio.get_running_loop()
        self.protocol_version = protocol_version
        self._elicitation = elicitation
        self._sampling = sampling
        self._roots = roots
        declared: dict[str, Any] = dict(capabilities or {})
        if elicitation is not None:
            declared.setdefault("elicitation", {"form": {}})
        if sampling is not None:
            declared.setdefault("sampling", {})
        if roots is not None:
            declared.setdefault("roots", {"listChanged": False})
        self.capabilities = declared
        self.client_info = client_info
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[Any, Progress] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read, name="toolwire-test-client", daemon=True)
        #: Notifications received so far (progress ones included), in order.
        self.notifications: list[dict[str, Any]] = []
        #: The `initialize` (or, in 2026-07-28, `server/discover`) result.
        self.server_info: dict[str, Any] = {}

    @property
    def modern(self) -> bool:
        return self.protocol_version == MODERN

    @property
    def server(self) -> dict[str, Any]:
        """The server's `{name, version, ...}`, from either era's answer."""
        meta = self.server_info.get("_meta") or {}
        return self.server_info.get("serverInfo") or meta.get("io.modelcontextprotocol/serverInfo") or {}

    async def _start(self) -> None:
        self._reader.start()
        if self.modern:
            self.server_info = await self.request("server/discover")
            return
        self.server_info = await self.request(
            "initialize",
            {
                "protocolVersion": self.protocol_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _close(self) -> None:
        # Calls in flight finish and their answers are read before the reader stops.
        await asyncio.to_thread(self._session.shutdown)
        self._closing.set()
        await asyncio.to_thread(self._reader.join, 10)
        closed = McpError({"code": -32000, "message": "the session closed before the answer"})
        for future in self._pending.values():
            if not future.done():
                future.set_exception(closed)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- the wire

    def _send(self, message: dict[str, Any]) -> None:
        self._session.handle_frame(json.dumps(message))

    def _read(self) -> None:
        """The session's outbound frames, handed to the loop (runs on its own thread: `recv`
        blocks)."""
        while True:
            started = time.monotonic()
            frame = self._session.recv(1.0)
            if frame is not None:
                self._loop.call_soon_threadsafe(self._dispatch, json.loads(frame))
            elif self._closing.is_set() or time.monotonic() - started < 0.5:
                # Drained at close, or the session ended (`recv` gave up at once, not after
                # waiting): nothing more will come.
                return

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" in message:
            self._track(self._loop.create_task(self._answer_request(message)))
            return
        self.notifications.append(message)
        if message["method"] == "notifications/progress":
            params = message.get("params", {})
            callback = self._progress.get(params.get("progressToken"))
            if callback is not None:
                outcome = callback(params.get("progress"), params.get("total"), params.get("message"))
                if inspect.isawaitable(outcome):
                    self._track(asyncio.ensure_future(outcome))

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer_request(self, message: dict[str, Any]) -> None:
        try:
            result = await self._answer(message["method"], message.get("params") or {})
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        except McpError as err:
            error = {"code": err.code, "message": err.message}
            self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        except Exception as err:  # a failing callback: the server hears it, no call hangs
            error = {"code": -32603, "message": f"the test client's callback failed: {err!r}"}
            self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})

    async def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """What this client answers to a question of the server's."""
        handler: Optional[Answer] = None
        if method == "elicitation/create":
            handler = self._elicitation
        elif method == "sampling/createMessage":
            handler = self._sampling
        elif method == "roots/list" and self._roots is not None:
            return {"roots": self._roots}
        elif method == "ping":
            return {}
        if handler is None:
            raise McpError({"code": -32601, "message": f"Method not found: {method}"})
        answer = handler(params)
        return await answer if inspect.isawaitable(answer) else answer

    # --- requests

    async def request(
        self, method: str, params: Optional[dict[str, Any]] = None, *, timeout: float = 30
    ) -> dict[str, Any]:
        """Sends `method` and returns its result; a JSON-RPC error raises `McpError`. In the
        2026-07-28 era the request carries the version, capabilities and client info in `_meta`."""
        params = dict(params or {})
        if self.modern:
            meta = dict(params.get("_meta") or {})
            meta.setdefault("io.modelcontextprotocol/protocolVersion", MODERN)
            meta.setdefault("io.modelcontextprotocol/clientCapabilities", self.capabilities)
            meta.setdefault("io.modelcontextprotocol/clientInfo", self.client_info)
            params["_meta"] = meta
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params or method != "ping":
            message["params"] = params
        self._send(message)
        try:
            answer = await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)
        if "error" in answer:
            raise McpError(answer["error"])
        return answer["result"]

    async def _rounds(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request that may answer input-required (2026-07-28): the questions are answered by
        the callbacks and the request sent again with the answers, until it completes."""
        for _ in range(_MAX_ROUNDS):
            result = await self.request(method, params)
            if result.get("resultType") != "input_required":
                return result
            questions = result.get("inputRequests") or {}
            answers = {key: await self._answer(q["method"], q.get("params") or {}) for key, q in questions.items()}
            params = {**params, "inputResponses": answers}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            else:
                params.pop("requestState", None)
        raise McpError({"code": -32603, "message": f"{method} still asked for input after {_MAX_ROUNDS} rounds"})

    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = await self.request(method, params)
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not cursor:
                return items
            params = {"cursor": cursor}

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, all pages."""
        return await self._list("tools/list", "tools")

    async def call_tool(
        self,
        name: str,
        arguments: Optional[dict[str, Any]] = None,
        *,
        progress_callback: Optional[Progress] = None,
    ) -> dict[str, Any]:
        """The tool's `CallToolResult` (an `isError` one too). `progress_callback(progress,
        total, message)`, sync or async, receives the call's progress notifications."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        token = None
        if progress_callback is not None:
            token = f"progress-{next(self._ids)}"
            self._progress[token] = progress_callback
            params["_meta"] = {"progressToken": token}
        try:
            return await self._rounds("tools/call", params)
        finally:
            self._progress.pop(token, None)

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """The `ReadResourceResult` (`contents`)."""
        return await self._rounds("resources/read", {"uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: Optional[dict[str, str]] = None) -> dict[str, Any]:
        """The `GetPromptResult` (`messages`)."""
        return await self._rounds("prompts/get", {"name": name, "arguments": arguments or {}})

    async def complete(self, ref: dict[str, Any], argument: str, value: str) -> dict[str, Any]:
        """The `completion` of `completion/complete` (`values`, `hasMore`, `total`)."""
        params = {"ref": ref, "argument": {"name": argument, "value": value}}
        return (await self.request("completion/complete", params))["completion"]
