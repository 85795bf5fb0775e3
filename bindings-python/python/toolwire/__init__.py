"""toolwire: register Python functions as MCP tools; a Rust engine speaks the protocol.

from toolwire import Server

server = Server("weather", "1.0.0")

@server.tool()
def forecast(city: str, days: int = 3) -> dict:
    \"\"\"Forecast for a city.\"\"\"
    return {"city": city, "celsius": [20.5] * days}

server.run()
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import inspect
import json
import logging
import sys
import threading
from typing import Any, Callable, ClassVar, Optional, TypeVar, Union

from . import _native
from ._native import (
    CapabilityError,
    ClientRequestError,
    RegistrationError,
    SessionClosedError,
    ToolwireError,
    TransportError,
)
from ._schema import analyse, convert

__all__ = [
    "Audio",
    "CapabilityError",
    "ClientRequestError",
    "Context",
    "EmbeddedResource",
    "Image",
    "RegistrationError",
    "ResourceLink",
    "Server",
    "Session",
    "SessionClosedError",
    "Text",
    "ToolError",
    "ToolResult",
    "ToolwireError",
    "TransportError",
]

logger = logging.getLogger("toolwire")

F = TypeVar("F", bound=Callable[..., Any])


class ToolError(Exception):
    """Raise it in a tool to give the model an `isError` result with this message.

    Any other exception does the same, and its traceback goes to the log.
    """


# ---------------------------------------------------------------- content blocks


@dataclasses.dataclass
class Text:
    """A text content block."""

    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclasses.dataclass
class _Media:
    data: str
    mime_type: str
    _kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self._kind, "data": self.data, "mimeType": self.mime_type}


@dataclasses.dataclass
class Image(_Media):
    """An image content block (`data` is base64)."""

    _kind: ClassVar[str] = "image"


@dataclasses.dataclass
class Audio(_Media):
    """An audio content block (`data` is base64)."""

    _kind: ClassVar[str] = "audio"


@dataclasses.dataclass
class ResourceLink:
    """A link to a resource the client can read."""

    uri: str
    name: str
    mime_type: Optional[str] = None
    description: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.mime_type:
            block["mimeType"] = self.mime_type
        if self.description:
            block["description"] = self.description
        return block


@dataclasses.dataclass
class EmbeddedResource:
    """A resource embedded in the result: give `text` or `blob` (base64)."""

    uri: str
    text: Optional[str] = None
    blob: Optional[str] = None
    mime_type: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if self.blob is not None:
            resource["blob"] = self.blob
        else:
            resource["text"] = self.text or ""
        if self.mime_type:
            resource["mimeType"] = self.mime_type
        return {"type": "resource", "resource": resource}


Block = Union[Text, Image, Audio, ResourceLink, EmbeddedResource]


@dataclasses.dataclass
class ToolResult:
    """Full control over a result: content blocks, structured content, error flag."""

    content: list[Block] = dataclasses.field(default_factory=list)
    structured: Optional[dict[str, Any]] = None
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": [b.to_json() for b in self.content]}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.is_error:
            result["isError"] = True
        return result


_BLOCKS = (Text, Image, Audio, ResourceLink, EmbeddedResource)


def _plain(value: Any) -> Any:
    """A return value as plain JSON data: dataclasses, models, enums, tuples and sets inside."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    return value


def _result(value: Any) -> dict[str, Any]:
    """A tool's return value as a CallToolResult dict."""
    if isinstance(value, ToolResult):
        return value.to_json()
    if isinstance(value, _BLOCKS):
        return {"content": [value.to_json()]}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _BLOCKS) for v in value):
        return {"content": [v.to_json() for v in value]}
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    value = _plain(value)
    if isinstance(value, dict):
        return {"structuredContent": value}
    return {"content": [{"type": "text", "text": json.dumps(value, separators=(",", ":"), default=str)}]}


# ---------------------------------------------------------------- context


class Context:
    """What a tool gets besides its arguments: annotate a parameter with `Context` to receive it."""

    def __init__(self, native: _native.NativeContext) -> None:
        self._native = native

    @property
    def request_id(self) -> Union[int, str]:
        """The id of the `tools/call` request."""
        return self._native.request_id

    @property
    def tool_name(self) -> str:
        return self._native.tool_name

    @property
    def protocol_version(self) -> str:
        return self._native.protocol_version

    @property
    def client_info(self) -> Optional[dict[str, Any]]:
        """The client's `clientInfo` (name, version, ...)."""
        return self._native.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._native.client_capabilities

    @property
    def cancelled(self) -> bool:
        """True once the call was cancelled (by the client, its deadline, or shutdown).

        Sync tools should check it in long loops; `async def` tools are cancelled for them
        (`asyncio.CancelledError`).
        """
        return self._native.cancelled

    def report_progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> bool:
        """Sends progress if the client asked for it and `progress` grew; returns whether it was sent."""
        return self._native.progress(progress, total, message)

    async def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> bool:
        """`await ctx.progress(done, total, message)`: see `report_progress`."""
        return self._native.progress(progress, total, message)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> bool:
        """Sends `notifications/message` if `level` passes the client's level."""
        return self._native.log(level, data, logger)

    def debug(self, data: Any) -> bool:
        return self.log("debug", data)

    def info(self, data: Any) -> bool:
        return self.log("info", data)

    def warning(self, data: Any) -> bool:
        return self.log("warning", data)

    def error(self, data: Any) -> bool:
        return self.log("error", data)

    async def sample(self, params: dict[str, Any], timeout: Optional[float] = None) -> dict[str, Any]:
        """`sampling/createMessage` (params as in the spec); raises CapabilityError if undeclared."""
        return await self._client("sample", params, timeout)

    async def elicit(self, params: dict[str, Any], timeout: Optional[float] = None) -> dict[str, Any]:
        """`elicitation/create` (form or URL mode); raises CapabilityError if undeclared."""
        return await self._client("elicit", params, timeout)

    async def list_roots(self, timeout: Optional[float] = None) -> list[dict[str, Any]]:
        """The client's roots (`roots/list`); raises CapabilityError if undeclared."""
        answer = await self._client("roots", {}, timeout)
        return answer.get("roots", [])

    async def wait_cancelled(self) -> None:
        """Completes when the call is cancelled."""
        await self._native.wait_cancelled(asyncio.get_running_loop())

    async def _client(self, kind: str, params: dict[str, Any], timeout: Optional[float]) -> Any:
        timeout_ms = None if timeout is None else int(timeout * 1000)
        return await self._native.client_request(kind, params, asyncio.get_running_loop(), timeout_ms)


# ---------------------------------------------------------------- server


def _wrap(
    fn: Callable[..., Any], context_param: Optional[str], params: dict[str, Any]
) -> tuple[Callable[..., Any], bool]:
    """The engine's calling convention `(native_ctx, arguments) -> result dict` around `fn`."""
    is_async = inspect.iscoroutinefunction(fn)
    name = getattr(fn, "__name__", "tool")

    def prepare(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> dict[str, Any]:
        kwargs = {key: convert(value, params.get(key, Any)) for key, value in arguments.items() if key in params}
        if context_param:
            kwargs[context_param] = Context(native_ctx)
        return kwargs

    def failed(exc: BaseException) -> None:
        if not isinstance(exc, ToolError):
            logger.error("tool %s raised", name, exc_info=exc)

    if is_async:

        async def invoke_async(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> dict[str, Any]:
            try:
                return _result(await fn(**prepare(native_ctx, arguments)))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failed(exc)
                raise

        return invoke_async, True

    def invoke(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return _result(fn(**prepare(native_ctx, arguments)))
        except Exception as exc:
            failed(exc)
            raise

    return invoke, False


class Session:
    """A session for a transport of your own: feed frames in, take frames out."""

    def __init__(self, native: _native.NativeSession, server: Server, bound: tuple[Any, Any]) -> None:
        self._native = native
        self._server = server
        self._loop, self._bridge = bound

    def handle_frame(self, frame: Union[bytes, str]) -> None:
        """Feeds one inbound JSON-RPC message (without the line terminator).

        If the loop this session was created in has closed since (``asyncio.run`` returned, a
        test's loop ended), `async def` tools move to the running loop or a private one.
        """
        if self._loop.is_closed():
            self._loop, self._bridge = self._server._bind_loop()
        self._native.handle_frame(frame.encode() if isinstance(frame, str) else frame)

    def recv(self, timeout: float = 10.0) -> Optional[str]:
        """The next outbound message, or None after `timeout` seconds or once the session ended."""
        return self._native.recv(timeout)

    def shutdown(self) -> None:
        """Ends the input; calls in flight may finish, then the outbound stream ends."""
        self._native.shutdown()
        if not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._loop.remove_reader, self._bridge.fileno())

    @property
    def protocol_version(self) -> Optional[str]:
        return self._native.protocol_version


class Server:
    """An MCP server whose tools are Python functions.

    Args:
        name: The server's name, sent to clients.
        version: The server's version.
        instructions: Usage hints for the model.
        title: Display name.
        page_size: Tools per `tools/list` page (default: all in one page).
        default_tool_timeout: Seconds a tool may run unless it sets its own `timeout`.
        max_concurrent_calls: Tool calls that may run at once (more wait in a bounded queue).
        max_frame_bytes: Largest inbound message in bytes (default 4 MiB).
        max_depth: Deepest JSON nesting accepted (default 64).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: Optional[str] = None,
        title: Optional[str] = None,
        page_size: Optional[int] = None,
        default_tool_timeout: Optional[float] = None,
        max_concurrent_calls: Optional[int] = None,
        max_frame_bytes: Optional[int] = None,
        max_depth: Optional[int] = None,
    ) -> None:
        timeout_ms = None if default_tool_timeout is None else int(default_tool_timeout * 1000)
        self._native = _native.NativeServer(
            name, version, instructions, title, page_size, timeout_ms, max_concurrent_calls, max_frame_bytes, max_depth
        )
        self._background_loop: Optional[asyncio.AbstractEventLoop] = None

    def tool(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        input_schema: Optional[dict[str, Any]] = None,
        output_schema: Optional[dict[str, Any]] = None,
        annotations: Optional[dict[str, Any]] = None,
        icons: Optional[list[dict[str, Any]]] = None,
        meta: Optional[dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_concurrency: Optional[int] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as a tool.

        The input schema comes from the type hints and defaults unless `input_schema` is given;
        the description from the docstring (its `Args:` section describes the parameters).
        Returning a dict, dataclass, TypedDict or pydantic model gives `structuredContent`
        (with an `outputSchema` from the return annotation); a str gives text.
        """

        def register(fn: F) -> F:
            self.add_tool(
                fn,
                name=name,
                title=title,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
                annotations=annotations,
                icons=icons,
                meta=meta,
                timeout=timeout,
                max_concurrency=max_concurrency,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        input_schema: Optional[dict[str, Any]] = None,
        output_schema: Optional[dict[str, Any]] = None,
        annotations: Optional[dict[str, Any]] = None,
        icons: Optional[list[dict[str, Any]]] = None,
        meta: Optional[dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_concurrency: Optional[int] = None,
    ) -> None:
        """Registers `fn` as a tool (see `tool`); while serving, clients get `list_changed`."""
        signature = analyse(fn, Context)
        params = signature.params
        if input_schema is not None:
            params = {key: Any for key in input_schema.get("properties", {})}
        definition: dict[str, Any] = {
            "name": name or fn.__name__,
            "inputSchema": input_schema if input_schema is not None else signature.input_schema,
        }
        described = description or signature.description
        if described:
            definition["description"] = described
        schema_out = output_schema if output_schema is not None else signature.output_schema
        if schema_out is not None:
            definition["outputSchema"] = schema_out
        for key, value in (("title", title), ("annotations", annotations), ("icons", icons), ("_meta", meta)):
            if value is not None:
                definition[key] = value
        invoke, is_async = _wrap(fn, signature.context_param, params)
        timeout_ms = None if timeout is None else int(timeout * 1000)
        self._native.add_tool(definition, invoke, is_async, timeout_ms, max_concurrency)

    def remove_tool(self, name: str) -> bool:
        """Removes a tool; False if there was none of that name."""
        return self._native.remove_tool(name)

    @property
    def tools(self) -> list[str]:
        """The registered tool names, sorted."""
        return self._native.tool_names()

    def run(self) -> None:
        """Serves stdio until stdin ends or Ctrl-C (blocking; runs its own asyncio loop)."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.run_async())

    def stop(self) -> None:
        """Ends a running `run()` / `run_async()`: reading stops, calls in flight finish."""
        self._native.stop()

    async def run_async(self) -> None:
        """Serves stdio inside a running asyncio loop; `async def` tools run on this loop.

        While serving, `print` and anything else written to `sys.stdout` goes to stderr:
        stdout carries the protocol only.
        """
        loop = asyncio.get_running_loop()
        bridge = self._native.bridge(loop)
        loop.add_reader(bridge.fileno(), bridge.drain)
        try:
            # Redirect before serving starts: a call may run as soon as the first line is read.
            with contextlib.redirect_stdout(sys.stderr):
                serving = loop.run_in_executor(None, self._native.serve_stdio, bridge)
                try:
                    await asyncio.shield(serving)
                except asyncio.CancelledError:
                    # Ctrl-C under asyncio.run, or the caller cancelled us: stop reading, and keep
                    # this loop running while calls in flight (some on it) drain, as at end of input.
                    self._native.stop()
                    with contextlib.suppress(Exception):
                        await serving
                    raise
        finally:
            loop.remove_reader(bridge.fileno())

    def session(self) -> Session:
        """A session for a transport of your own (and for tests).

        `async def` tools run on the running loop if called from one, otherwise on a private
        loop in a daemon thread.
        """
        loop, bridge = self._bind_loop()
        return Session(self._native.session(bridge), self, (loop, bridge))

    def _bind_loop(self) -> tuple[asyncio.AbstractEventLoop, Any]:
        """Runs `async def` tools on the running loop, or on a private one."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = self._private_loop()
        bridge = self._native.bridge(loop)
        # add_reader is not thread-safe: schedule it on the loop (a wake-up written before it
        # runs waits in the socket).
        loop.call_soon_threadsafe(loop.add_reader, bridge.fileno(), bridge.drain)
        self._native.use_bridge(bridge)
        return loop, bridge

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        if self._background_loop is None or self._background_loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="toolwire-loop", daemon=True).start()
            self._background_loop = loop
        return self._background_loop
