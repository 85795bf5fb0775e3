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
import base64
import contextlib
import dataclasses
import enum
import inspect
import json
import logging
import signal
import sys
import threading
from typing import Any, Callable, ClassVar, Optional, TypeVar, Union

from . import _native
from ._loop import new_event_loop
from ._loop import run as _run_on_new_loop
from ._native import (
    CapabilityError,
    ClientRequestError,
    RegistrationError,
    SessionClosedError,
    ToolwireError,
    TransportError,
)
from ._schema import analyse, converter

__all__ = [
    "Audio",
    "HttpServer",
    "ResourceNotFound",
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
    "new_event_loop",
]

logger = logging.getLogger("toolwire")

F = TypeVar("F", bound=Callable[..., Any])


class ToolError(Exception):
    """Raise it in a tool to give the model an `isError` result with this message.

    Any other exception does the same, and its traceback goes to the log.
    """


class ResourceNotFound(Exception):
    """Raise it in a resource function: the client gets JSON-RPC -32002 (resource not found)."""


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

    def close_sse_stream(self) -> None:
        """Over Streamable HTTP with an SSE answer: closes the connection carrying this call
        (after a retry hint) without ending the call; the client reconnects and resumes, and
        gets what was sent meanwhile. No effect on stdio."""
        self._native.close_sse_stream()

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
    """The engine's calling convention around `fn`: `(native_ctx, arguments) -> result dict`, or for
    `async def`, `(native_ctx, arguments, done)` handing its outcome to `done`."""
    is_async = inspect.iscoroutinefunction(fn)
    name = getattr(fn, "__name__", "tool")
    converters = {key: converter(tp) for key, tp in params.items()}

    def prepare(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> dict[str, Any]:
        kwargs = {}
        for key, value in arguments.items():
            if key in converters:
                to_type = converters[key]
                kwargs[key] = value if to_type is None else to_type(value)
        if context_param:
            kwargs[context_param] = Context(native_ctx)
        return kwargs

    def failed(exc: BaseException) -> None:
        if not isinstance(exc, ToolError):
            logger.error("tool %s raised", name, exc_info=exc)

    if is_async:

        async def invoke_async(
            native_ctx: _native.NativeContext, arguments: dict[str, Any], done: _native.CallDone
        ) -> None:
            # The outcome goes to `done` from here, not from a done-callback: one loop turn less.
            try:
                result = _result(await fn(**prepare(native_ctx, arguments)))
            except Exception as exc:
                failed(exc)
                done.fail(exc)
                return
            except BaseException as exc:
                # Cancelled (or the process is exiting): Rust hears of it, the task still ends so.
                done.fail(exc)
                raise
            done.ok(result)

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
        # The loop `async def` resources, prompts and completers run on (the serving one).
        self._loop: Optional[asyncio.AbstractEventLoop] = None

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
        signature = analyse(fn, Context, (ToolResult, *_BLOCKS))
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
            _run_on_new_loop(self.run_async())

    def stop(self) -> None:
        """Ends a running `run()` / `run_async()` / `serve_http()`: reading stops, calls in
        flight finish."""
        self._native.stop()
        http = getattr(self, "_http", None)
        if http is not None:
            http.stop()

    async def run_async(self) -> None:
        """Serves stdio inside a running asyncio loop; `async def` tools run on this loop.

        While serving, `print` and anything else written to `sys.stdout` goes to stderr:
        stdout carries the protocol only.
        """
        loop = asyncio.get_running_loop()
        bridge = self._native.bridge(loop)
        loop.add_reader(bridge.fileno(), bridge.drain)
        self._loop = loop
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

    # ------------------------------------------------------------ resources, prompts, completion

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        annotations: Optional[dict[str, Any]] = None,
        meta: Optional[dict[str, Any]] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as the reader of `uri`.

        A `uri` with `{variables}` (RFC 6570: `{id}` is one path segment, `{+path}` anything) is a
        resource template: the function gets the variables as keyword arguments. A parameter
        named `uri` gets the URI asked for. Return a str (text), bytes (a blob), a dict with
        `text` or `blob`, or a list of those; raise `ResourceNotFound` for a URI that does not
        exist.
        """

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                meta=meta,
            )
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        annotations: Optional[dict[str, Any]] = None,
        meta: Optional[dict[str, Any]] = None,
    ) -> None:
        """Registers `fn` as a resource or resource template (see `resource`)."""
        template = "{" in uri
        definition: dict[str, Any] = {"uriTemplate" if template else "uri": uri, "name": name or fn.__name__}
        described = description or _first_paragraph(fn)
        for key, value in (
            ("title", title),
            ("description", described),
            ("mimeType", mime_type),
            ("annotations", annotations),
            ("_meta", meta),
        ):
            if value is not None:
                definition[key] = value
        parameters = inspect.signature(fn).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())

        def invoke(request: dict[str, Any]) -> Any:
            kwargs = {k: v for k, v in request["variables"].items() if takes_any or k in parameters}
            if "uri" in parameters:
                kwargs["uri"] = request["uri"]
            try:
                value = self._call(fn, **kwargs)
            except ResourceNotFound as exc:
                return {"notFound": str(exc) or request["uri"]}
            except Exception:
                logger.error("resource %s raised", uri, exc_info=True)
                raise
            return {"contents": _resource_contents(request["uri"], value, mime_type)}

        self._native.add_resource(definition, invoke, template)

    def prompt(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        meta: Optional[dict[str, Any]] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as a prompt.

        Its parameters are the prompt's arguments (strings; required unless they have a
        default). Return a str (one user message), a list of messages (str, content blocks such
        as `Image`, or `{"role", "content"}` dicts), or a dict with `messages`.
        """

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, title=title, description=description, meta=meta)
            return fn

        return register

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        meta: Optional[dict[str, Any]] = None,
    ) -> None:
        """Registers `fn` as a prompt (see `prompt`)."""
        arguments = [
            {"name": p.name, "required": p.default is inspect.Parameter.empty}
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        ]
        definition: dict[str, Any] = {"name": name or fn.__name__, "arguments": arguments}
        described = description or _first_paragraph(fn)
        for key, value in (("title", title), ("description", described), ("_meta", meta)):
            if value is not None:
                definition[key] = value

        def invoke(request: dict[str, Any]) -> Any:
            try:
                return _prompt_result(self._call(fn, **request["arguments"]))
            except Exception:
                logger.error("prompt %s raised", definition["name"], exc_info=True)
                raise

        self._native.add_prompt(definition, invoke)

    def completion(self, *, prompt: Optional[str] = None, template: Optional[str] = None) -> Callable[[F], F]:
        """Registers the decorated `fn(argument, value, context) -> list[str]` (sync or async) as
        the completer of a prompt's arguments or a resource template's variables."""
        if (prompt is None) == (template is None):
            raise ValueError("give exactly one of prompt= and template=")

        def register(fn: F) -> F:
            def invoke(request: dict[str, Any]) -> Any:
                values = self._call(fn, request["argument"], request["value"], request["context"])
                return {"values": [str(v) for v in values]}

            if prompt is not None:
                self._native.set_completer("prompt", prompt, invoke)
            else:
                self._native.set_completer("template", template or "", invoke)
            return fn

        return register

    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or template; False if there was none."""
        return self._native.remove_resource(uri)

    def remove_prompt(self, name: str) -> bool:
        """Removes a prompt; False if there was none."""
        return self._native.remove_prompt(name)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells the clients subscribed to `uri` that it changed."""
        self._native.notify_resource_updated(uri)

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Runs `fn` on this (engine) thread; a coroutine runs on the serving loop meanwhile."""
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            loop = self._loop or self._private_loop()
            return asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
        return result

    # ------------------------------------------------------------ Streamable HTTP

    async def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        allowed_hosts: Optional[list[str]] = None,
        allowed_origins: Optional[list[str]] = None,
        max_sessions: Optional[int] = None,
        session_idle_timeout: Optional[float] = None,
        token_validator: Optional[Callable[[str], Optional[dict[str, Any]]]] = None,
        authorization_servers: Optional[list[str]] = None,
        resource_url: Optional[str] = None,
    ) -> HttpServer:
        """Starts serving Streamable HTTP at `http://host:port/path` (port 0 picks one; see
        `HttpServer.url`); `async def` tools run on the running loop.

        Safe by default: Host and Origin are checked (loopback names for a loopback host, or
        `allowed_hosts` / `allowed_origins`). `stateless` drops sessions (requests to the client
        then fail at once); `json_response` always answers with one JSON body. With
        `token_validator(token) -> {"subject", "scopes"} | None` every request needs a bearer
        token (401 otherwise, pointing at the metadata that names `authorization_servers`);
        `{"insufficientScope": scope}` refuses a valid token that lacks a scope (403).
        """
        loop = asyncio.get_running_loop()
        bridge = self._native.bridge(loop)
        loop.add_reader(bridge.fileno(), bridge.drain)
        self._loop = loop
        idle_ms = None if session_idle_timeout is None else int(session_idle_timeout * 1000)
        try:
            native = self._native.start_http(
                bridge,
                host,
                port,
                path,
                stateless,
                json_response,
                list(allowed_hosts or []),
                list(allowed_origins or []),
                max_sessions,
                idle_ms,
                None if token_validator is None else _token_check(token_validator),
                list(authorization_servers or []),
                resource_url,
            )
        except BaseException:
            loop.remove_reader(bridge.fileno())
            raise
        return HttpServer(native, loop, bridge)

    async def serve_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serves Streamable HTTP until cancelled or `stop()` (see `start_http` for options)."""
        http = await self.start_http(host, port, **options)
        self._http = http
        logger.info("serving MCP at %s", http.url)
        await http.wait()

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serves Streamable HTTP until Ctrl-C or SIGTERM (blocking; runs its own asyncio loop).

        Writes `toolwire: listening on <url>` to stderr once it accepts connections (with port 0,
        the line a launcher reads the port from).
        """

        async def main() -> None:
            http = await self.start_http(host, port, **options)
            self._http = http
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGTERM, http.stop)
            print(f"toolwire: listening on {http.url}", file=sys.stderr, flush=True)
            await http.wait()

        with contextlib.suppress(KeyboardInterrupt):
            _run_on_new_loop(main())

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
        self._loop = loop
        return loop, bridge

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        if self._background_loop is None or self._background_loop.is_closed():
            loop = new_event_loop()
            threading.Thread(target=loop.run_forever, name="toolwire-loop", daemon=True).start()
            self._background_loop = loop
        return self._background_loop


class HttpServer:
    """A running Streamable HTTP server (from `Server.start_http`)."""

    def __init__(self, native: _native.NativeHttpServer, loop: asyncio.AbstractEventLoop, bridge: Any) -> None:
        self._native = native
        self._loop = loop
        self._bridge = bridge

    @property
    def url(self) -> str:
        """The endpoint, e.g. `http://127.0.0.1:8000/mcp`."""
        return self._native.url

    def stop(self) -> None:
        """Stops accepting; sessions drain their calls and end (await `wait()`)."""
        self._native.stop()

    async def wait(self) -> None:
        """Until the server stopped; cancelling this stops it (calls in flight still drain)."""
        waiting = self._loop.run_in_executor(None, self._native.wait)
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            self._native.stop()
            with contextlib.suppress(Exception):
                await waiting
            raise
        finally:
            self._loop.remove_reader(self._bridge.fileno())


def _token_check(validate: Callable[[str], Any]) -> Callable[[dict[str, Any]], Any]:
    """The engine's `{"token": ...}` request in, the validator's verdict out."""
    return lambda request: validate(request["token"])


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _first_paragraph(fn: Callable[..., Any]) -> Optional[str]:
    doc = inspect.getdoc(fn)
    return doc.split("\n\n")[0].strip() if doc else None


def _resource_contents(uri: str, value: Any, mime_type: Optional[str]) -> list[dict[str, Any]]:
    """A resource function's return value as the wire's `contents` list."""
    items = value if isinstance(value, list) else [value]
    contents = []
    for item in items:
        if isinstance(item, str):
            entry: dict[str, Any] = {"uri": uri, "text": item}
        elif isinstance(item, (bytes, bytearray, memoryview)):
            entry = {"uri": uri, "blob": base64.b64encode(bytes(item)).decode("ascii")}
        elif isinstance(item, dict) and ("text" in item or "blob" in item):
            entry = {"uri": uri, **item}
            if "mime_type" in entry:
                entry["mimeType"] = entry.pop("mime_type")
        else:
            raise TypeError(f"a resource function returned {type(item).__name__}; return str, bytes or a dict")
        if mime_type is not None:
            entry.setdefault("mimeType", mime_type)
        contents.append(entry)
    return contents


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, dict) and "role" in item:
        content = item.get("content")
        if isinstance(content, str):
            content = {"type": "text", "text": content}
        elif hasattr(content, "to_json"):
            content = content.to_json()
        return {"role": item["role"], "content": content}
    if hasattr(item, "to_json"):
        return {"role": "user", "content": item.to_json()}
    raise TypeError(f"a prompt message cannot be {type(item).__name__}")


def _prompt_result(value: Any) -> dict[str, Any]:
    """A prompt function's return value as the wire's `GetPromptResult`."""
    if isinstance(value, dict) and "messages" in value:
        result = dict(value)
        result["messages"] = [_message(m) for m in value["messages"]]
        return result
    items = value if isinstance(value, list) else [value]
    return {"messages": [_message(m) for m in items]}
