"""A client for tests: drives a `Server` in process through core's in-memory session, as a real
client would, without JSON-RPC text in the test. The client is core's (`toolwire::client`, the
same in every language); this module hands its outcomes to asyncio.

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
import json
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Callable, Optional, Union

from . import _native
from ._server import Server

__all__ = ["McpError", "TestClient", "connect", "replay_vector"]


Answer = Callable[[dict[str, Any]], Union[dict[str, Any], Awaitable[dict[str, Any]]]]
Progress = Callable[[float, Optional[float], Optional[str]], Any]


def replay_vector(server: Server, case: dict[str, Any]) -> None:
    """Replays one golden wire vector case (`tests/vectors`: frames sent, frames expected) on a
    new session of `server`, with core's replayer, the one every language uses. Raises
    `AssertionError` naming the step that failed. Call it outside a running loop: it blocks."""
    _, bridge = server._bind_loop()
    failure = server._native.replay_vector(bridge, json.dumps(case))
    if failure is not None:
        raise AssertionError(f"{case.get('name', 'vector')}: {failure}")


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
    timeout: float = 30,
) -> AsyncIterator[TestClient]:
    """A connected `TestClient`; the session drains and ends when the block does.

    `elicitation(params)` and `sampling(params)` (sync or async) answer the server's
    `elicitation/create` and `sampling/createMessage`; `roots` is what `roots/list` returns.
    Each one given is declared in the client's capabilities (merged with `capabilities`).
    `timeout` is how long a request waits for its answer (seconds). The server's `lifespan` is
    entered first and exited after the session ends.
    """
    # The server's lifespan around the session (its value reaches the handlers; exited at the end).
    async with server:
        client = TestClient(
            server,
            protocol_version=protocol_version,
            elicitation=elicitation,
            sampling=sampling,
            roots=roots,
            capabilities=capabilities,
            client_info=client_info or {"name": "toolwire-test-client", "version": "1.0"},
            timeout=timeout,
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
        server: Server,
        *,
        protocol_version: str,
        elicitation: Optional[Answer],
        sampling: Optional[Answer],
        roots: Optional[list[dict[str, Any]]],
        capabilities: Optional[dict[str, Any]],
        client_info: dict[str, Any],
        timeout: float = 30,
    ) -> None:
        self._server = server
        self._loop = asyncio.get_running_loop()
        self.protocol_version = protocol_version
        self.client_info = client_info
        self._elicitation = elicitation
        self._sampling = sampling
        self._timeout = timeout
        self._options = {
            "protocol_version": protocol_version,
            "capabilities": capabilities or {},
            "client_info": client_info,
            "elicitation": elicitation is not None,
            "sampling": sampling is not None,
            "roots": roots,
            "request_timeout": timeout,
        }
        self._native: Optional[_native.NativeClient] = None
        self._bridge: Any = None
        self._tasks: set[asyncio.Future[Any]] = set()
        #: The declared capabilities (those `connect` was given, plus one per answer given).
        self.capabilities: dict[str, Any] = {}
        #: The `initialize` (or, in 2026-07-28, `server/discover`) result.
        self.server_info: dict[str, Any] = {}
        #: The server's `{name, version, ...}`, from either era's answer.
        self.server: dict[str, Any] = {}
        #: Whether it speaks 2026-07-28 (no session handshake; `_meta` on every request).
        self.modern = False
        self._waiting: set[asyncio.Event] = set()
        self._waited: dict[str, int] = {}

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """Notifications received so far (progress ones included), in order."""
        return json.loads(self._native.notifications()) if self._native is not None else []

    # --- core's client, its outcomes handed to this loop

    def _client(self) -> _native.NativeClient:
        if self._native is None:
            raise RuntimeError("the test client is not connected")
        return self._native

    def _outcome(self) -> tuple[asyncio.Future[Any], Callable[[str, Any], None]]:
        """A future on this loop and the `done(kind, payload)` that settles it (from the client's
        thread)."""
        future: asyncio.Future[Any] = self._loop.create_future()

        def settle(kind: str, payload: Any) -> None:
            if future.done():
                return
            if kind == "ok":
                future.set_result(json.loads(payload))
            elif kind == "rpc":
                future.set_exception(McpError(json.loads(payload)))
            else:
                future.set_exception(payload)

        def done(kind: str, payload: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                self._loop.call_soon_threadsafe(settle, kind, payload)

        return future, done

    async def _start(self) -> None:
        loop, self._bridge = self._server._bind_loop()
        future, done = self._outcome()
        self._native = self._server._native.client(self._bridge, json.dumps(self._options), self._asked, done)
        connected = await future
        self.server_info = connected["serverInfo"]
        self.server = connected["server"]
        self.modern = connected["modern"]
        self.capabilities = connected["capabilities"]
        self._native.on_notification(self._heard)

    def _heard(self, method: str) -> None:
        """A notification arrived (on the client's thread): whoever waits looks again."""

        def wake() -> None:
            for waiting in self._waiting:
                waiting.set()

        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
            self._loop.call_soon_threadsafe(wake)

    async def wait_for_notification(self, method: str, timeout: Optional[float] = None) -> dict[str, Any]:
        """The params of the first `method` notification not yet waited for, waiting until one
        arrives (at most `timeout` seconds, default the client's; then `TimeoutError`). Each
        notification ends one wait, so one that came before the call is not missed (among the
        last 10,000 the client keeps)."""

        async def arrived() -> dict[str, Any]:
            while True:
                woken = asyncio.Event()
                self._waiting.add(woken)
                try:
                    seen = [n for n in self.notifications if n.get("method") == method]
                    used = self._waited.get(method, 0)
                    if len(seen) > used:
                        self._waited[method] = used + 1
                        return seen[used].get("params") or {}
                    await woken.wait()
                finally:
                    self._waiting.discard(woken)

        return await asyncio.wait_for(arrived(), self._timeout if timeout is None else timeout)

    async def _close(self) -> None:
        # Calls in flight finish and their answers are read first (core's close).
        if self._native is not None:
            future, done = self._outcome()
            self._native.close(done)
            await future
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        bridge, loop = self._bridge, self._loop
        if bridge is not None:
            # Jobs queued before the session ended (cancelling its calls' tasks) run first.
            bridge.drain()
            loop.remove_reader(bridge.fileno())

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _asked(self, method: str, params: str, reply: _native.ClientReply) -> None:
        """A question of the server's (on the client's thread): answered on the loop."""

        def start() -> None:
            self._track(self._loop.create_task(self._reply(method, json.loads(params), reply)))

        with contextlib.suppress(RuntimeError):  # the loop closed: the reply never comes
            self._loop.call_soon_threadsafe(start)

    async def _reply(self, method: str, params: dict[str, Any], reply: _native.ClientReply) -> None:
        handler = self._elicitation if method == "elicitation/create" else self._sampling
        try:
            if handler is None:
                raise McpError({"code": -32601, "message": f"Method not found: {method}"})
            answer = handler(params)
            if inspect.isawaitable(answer):
                answer = await answer
            reply.ok(json.dumps(answer))
        except McpError as err:
            reply.fail(err.code, err.message, None if err.data is None else json.dumps(err.data))
        except Exception as err:  # a failing callback: the server hears it, no call hangs
            reply.fail(-32603, f"the test client's callback failed: {err!r}")

    # --- requests

    async def request(
        self, method: str, params: Optional[dict[str, Any]] = None, *, timeout: Optional[float] = None
    ) -> dict[str, Any]:
        """Sends `method` and returns its result; a JSON-RPC error raises `McpError`, no answer
        within `timeout` seconds `TimeoutError`. In the 2026-07-28 era the request carries the
        version, capabilities and client info in `_meta`."""
        future, done = self._outcome()
        wait = self._timeout if timeout is None else timeout
        self._client().request(method, json.dumps(params or {}), wait, done)
        result: dict[str, Any] = await future
        return result

    async def _rounds(
        self, method: str, params: dict[str, Any], progress_callback: Optional[Progress] = None
    ) -> dict[str, Any]:
        """A request that may answer input-required (2026-07-28): core answers the questions
        (through the callbacks) and sends the request again, until it completes."""
        future, done = self._outcome()
        progress = None
        if progress_callback is not None:
            callback = progress_callback

            def heard(params: dict[str, Any]) -> None:
                outcome = callback(params.get("progress"), params.get("total"), params.get("message"))
                if inspect.isawaitable(outcome):
                    self._track(asyncio.ensure_future(outcome))

            def progress(text: str) -> None:
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(heard, json.loads(text))

        self._client().request_answering_input(method, json.dumps(params), done, progress)
        result: dict[str, Any] = await future
        return result

    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        future, done = self._outcome()
        self._client().list_all(method, key, done)
        items: list[dict[str, Any]] = await future
        return items

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
        params = {"name": name, "arguments": arguments or {}}
        return await self._rounds("tools/call", params, progress_callback)

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

    async def complete(
        self, ref: dict[str, Any], argument: str, value: str, context: Optional[dict[str, str]] = None
    ) -> dict[str, Any]:
        """The `completion` of `completion/complete` (`values`, `hasMore`, `total`); `context`
        the other arguments given so far."""
        future, done = self._outcome()
        context_text = None if context is None else json.dumps(context)
        self._client().complete(json.dumps(ref), argument, value, context_text, done)
        completion: dict[str, Any] = await future
        return completion
