"""`Server`, from its tools to the stdio transport, and `Session` for a transport of your own.

`Server` gathers the other concerns: it is `CatalogMixin` (resources, prompts, completion;
`_catalog`) plus `HttpMixin` (Streamable HTTP; `_http`) over `ServerBase` (`_base`). Of the
package's modules only `__init__` imports this one.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from . import _logs, _native, _otel
from ._base import F, check_counts, logger, millis
from ._catalog import CatalogMixin, _requirements
from ._content import BLOCKS, InputRequired, ProtocolError, ToolError, ToolResult, call_result
from ._context import Context
from ._http import HttpMixin
from ._loop import reraise_on_running_loop
from ._loop import run as _run_on_new_loop
from ._middleware import Around, Middleware
from ._schema import analyse, converter

if TYPE_CHECKING:
    # Imported where a loop is used: a server of plain functions never needs asyncio.
    import asyncio

#: Whether a tool may run as a task (the tasks extension): "never" (default), "optional" or
#: "required".
TaskSupport = Literal["never", "optional", "required"]
Visibility = Literal["model", "app"]


def _returned(value: Any) -> Any:
    """A tool's return value for the engine: an `InputRequired` kept apart from data."""
    if isinstance(value, InputRequired):
        return _native.InputRequiredAnswer(value.to_json())
    return call_result(value)


def _wrap(
    fn: Callable[..., Any],
    context_param: Optional[str],
    params: dict[str, Any],
    renamed: Optional[dict[str, str]] = None,
    defaults: Optional[dict[str, Callable[[], Any]]] = None,
    lifespan: Any = None,
    tool: str = "tool",
) -> tuple[Callable[..., Any], bool]:
    """The engine's calling convention around `fn`: `(native_ctx, arguments) -> returned value`
    (Python types converted, see `call_result`), or for
    `async def`, `(native_ctx, arguments, done)` handing its outcome to `done`."""
    is_async = inspect.iscoroutinefunction(fn)
    name = getattr(fn, "__name__", "tool")
    # Each argument's parameter (an alias names another) and conversion, decided once.
    targets = {key: ((renamed or {}).get(key, key), converter(tp)) for key, tp in params.items()}
    fills = defaults or {}

    def prepare(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> dict[str, Any]:
        kwargs = {}
        for key, value in arguments.items():
            target = targets.get(key)
            if target is not None:
                name, to_type = target
                kwargs[name] = value if to_type is None else to_type(value)
        for name, make in fills.items():
            # A `Field(...)` default: Python would pass the Field itself.
            if name not in kwargs:
                kwargs[name] = make()
        if context_param:
            kwargs[context_param] = Context(native_ctx, lifespan)
        return kwargs

    def failed(exc: BaseException) -> None:
        if not isinstance(exc, (ToolError, ProtocolError)):
            logger.error("tool %s raised", name, exc_info=exc)

    if is_async:

        async def invoke_async(
            native_ctx: _native.NativeContext, arguments: dict[str, Any], done: _native.CallDone
        ) -> None:
            # The outcome goes to `done` from here, not from a done-callback: one loop turn less.
            span = _otel.tool_span(tool, native_ctx)
            try:
                if span is None:
                    result = _returned(await fn(**prepare(native_ctx, arguments)))
                else:
                    with span:
                        result = _returned(await fn(**prepare(native_ctx, arguments)))
            except Exception as exc:
                failed(exc)
                done.fail(exc)
                return
            except _native.InputRequiredError as exc:
                # The engine asks the client (2026-07-28); nothing went wrong.
                done.fail(exc)
                return
            except BaseException as exc:
                # Cancelled (or the process is exiting): Rust hears of it, the task still ends so.
                done.fail(exc)
                raise
            done.ok(result)

        return invoke_async, True

    def invoke(native_ctx: _native.NativeContext, arguments: dict[str, Any]) -> Any:
        span = _otel.tool_span(tool, native_ctx)
        try:
            if span is None:
                return _returned(fn(**prepare(native_ctx, arguments)))
            with span:
                return _returned(fn(**prepare(native_ctx, arguments)))
        except Exception as exc:
            failed(exc)
            raise
        except (KeyboardInterrupt, SystemExit) as exc:
            # Run in place on a loop's thread (`run_in_thread=False`, mounted): out of the loop
            # with it, as from a task. The call still ends, with an error.
            reraise_on_running_loop(exc)
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
        self._unwatch()

    def close(self) -> None:
        """Ends the session at once: calls in flight are cancelled and nothing more is sent
        (`recv` then returns None). Returns once the calls have ended."""
        self._native.close()
        self._unwatch()

    def _unwatch(self) -> None:
        if not self._loop.is_closed():
            bridge, loop = self._bridge, self._loop

            def unwatch() -> None:
                # Jobs queued before the session ended (cancelling its calls' tasks) run first.
                bridge.drain()
                loop.remove_reader(bridge.fileno())

            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(unwatch)

    @property
    def protocol_version(self) -> Optional[str]:
        return self._native.protocol_version


class Server(CatalogMixin, HttpMixin):
    """An MCP server whose tools are Python functions.

    Args:
        name: The server's name, sent to clients.
        version: The server's version.
        instructions: Usage hints for the model.
        title: Display name.
        page_size: Tools per `tools/list` page (default: all in one page).
        default_tool_timeout: Seconds a tool may run unless it sets its own `timeout`.
        max_concurrent_calls: Tool calls that may run at once (more wait in a bounded queue).
        max_concurrent_calls_per_session: Tool calls of one client session that may run at once
            (default 1024); its further calls wait behind it, so one client cannot take every
            slot while others wait.
        max_concurrent_calls_per_principal: Tool calls of one authenticated principal (a bearer
            token's subject) that may run at once over all its sessions and requests (default
            1024); its further calls wait behind it.
        max_outbound_bytes: Bytes of answers held for a stdio client that is not reading them
            (default 4 MiB); past it no new request is read until the client catches up.
        max_frame_bytes: Largest inbound message in bytes (default 4 MiB).
        max_depth: Deepest JSON nesting accepted (default 64).
        cache_ttl_ms: 2026-07-28: how long clients may cache lists, reads and `server/discover`
            (milliseconds, default 0).
        cache_scope: 2026-07-28: "private" (default) or "public".
        request_state_keys: 2026-07-28: secrets (each at least 32 bytes) for the keys that seal
            `requestState` between MRTR rounds; the first seals, all open. Default: one random
            key per process, so replicas behind one address must share keys.
        redis: Share tasks and changes with the other replicas of this server through the
            Redis at this URL (`redis://[:password@]host:port/db`); default None: everything
            stays in this process. Connects here: a Redis that cannot be reached raises
            `TransportError` naming the URL. Give every replica the same `request_state_keys`.
        modern_only: Serve 2026-07-28 only (`initialize` is refused with -32022).
        task_after: Tasks extension: seconds a call of a `task_support` tool runs in its request
            before it becomes a task (default 0.25); one that asks the client something becomes
            one at once.
        task_ttl: Seconds a task is kept after its creation, finished or not (its `ttlMs`;
            default 3600); a handler still running then is cancelled.
        task_poll_interval: Seconds clients are told to wait between polls of a task (its
            `pollIntervalMs`; default 1).
        max_tasks: Tasks kept at once, finished ones included until they expire (default
            10,000); past it a call that would become a task is refused (-32603, retry later).
        max_tasks_per_principal: Tasks one principal (without authentication: everyone
            together) may hold at once (default 1,000).
        metrics: Count requests, calls by tool, refusals, sessions and streams for `metrics()`
            and `metrics_text()` (default True; a few atomic additions per request).
        sync_handler_threads: Threads that may run plain `def` handlers at once. Process-wide:
            the largest any Server asks for (default min(32, CPUs + 4), as Python's
            `ThreadPoolExecutor`). A sync handler waiting on I/O holds its thread, so raise it
            for many such calls at once, or write them `async def` (not bounded by it). As in
            an executor, a thread's `threading.local` and context variables carry over from
            one call to the next on it.
        lifespan: Set-up and clean-up around serving, as in the official SDK: a function of the
            server returning an async context manager (an `@asynccontextmanager` generator)
            whose value tools read as `ctx.lifespan_context` (or
            `ctx.request_context.lifespan_context`), and resources and prompts as a `Round`'s
            `lifespan_context`. Entered before serving starts (`run`, `run_async`,
            `serve_http`, `testing.connect`, `async with server:`), once however many of them
            run, and exited when the last one ends, after its calls in flight. A call that
            arrives with nothing serving (a `session()` of your own) enters it, and `stop()`
            exits it; calls wait while it is entered, and a failure to enter is each waiting
            serve's exception and each waiting call's error. It is entered and exited in one
            task of its own, so a task group inside it works.
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
        max_concurrent_calls_per_session: Optional[int] = None,
        max_concurrent_calls_per_principal: Optional[int] = None,
        max_outbound_bytes: Optional[int] = None,
        max_frame_bytes: Optional[int] = None,
        max_depth: Optional[int] = None,
        cache_ttl_ms: Optional[int] = None,
        cache_scope: Optional[str] = None,
        request_state_keys: Optional[list[str]] = None,
        modern_only: bool = False,
        sync_handler_threads: Optional[int] = None,
        metrics: bool = True,
        redis: Optional[str] = None,
        task_after: Optional[float] = None,
        task_ttl: Optional[float] = None,
        task_poll_interval: Optional[float] = None,
        max_tasks: Optional[int] = None,
        max_tasks_per_principal: Optional[int] = None,
        lifespan: Optional[Callable[[Server], contextlib.AbstractAsyncContextManager[Any]]] = None,
    ) -> None:
        check_counts(
            page_size=page_size,
            max_concurrent_calls=max_concurrent_calls,
            max_concurrent_calls_per_session=max_concurrent_calls_per_session,
            max_concurrent_calls_per_principal=max_concurrent_calls_per_principal,
            max_outbound_bytes=max_outbound_bytes,
            max_frame_bytes=max_frame_bytes,
            max_depth=max_depth,
            cache_ttl_ms=cache_ttl_ms,
            max_tasks=max_tasks,
            max_tasks_per_principal=max_tasks_per_principal,
        )
        if sync_handler_threads is not None and not 1 <= sync_handler_threads <= 1024:
            raise ValueError(f"sync_handler_threads must be between 1 and 1024, not {sync_handler_threads}")
        timeout_ms = millis("default_tool_timeout", default_tool_timeout)
        native = _native.NativeServer(
            name,
            version,
            instructions,
            title,
            page_size,
            timeout_ms,
            max_concurrent_calls,
            max_concurrent_calls_per_session,
            max_concurrent_calls_per_principal,
            max_outbound_bytes,
            max_frame_bytes,
            max_depth,
            cache_ttl_ms,
            cache_scope,
            request_state_keys,
            modern_only,
            sync_handler_threads,
            metrics,
            redis,
            millis("task_after", task_after),
            millis("task_ttl", task_ttl),
            millis("task_poll_interval", task_poll_interval),
            max_tasks,
            max_tasks_per_principal,
        )
        super().__init__(native, lifespan)
        # Whether `run()` needs an asyncio loop (an `async def` tool was ever added), and how
        # many serves run without one (an `async def` tool added meanwhile binds a loop).
        self._async_tools = False
        self._serving_without_loop = 0
        #: The name and version sent to clients.
        self.name = name
        self.version = version

    def middleware(self, fn: Middleware) -> Middleware:
        """Puts `async def fn(request, call_next)` around every request but `initialize`, after
        the middlewares added before it. Before `await call_next()` it decides: raise
        `ProtocolError(code, message)` to answer with that JSON-RPC error, or `ToolError(text)` to
        answer a `tools/call` with an `isError` result; `call_next()` returns the `Outcome` (kind,
        code, elapsed seconds) once the answer is sent. It runs on the serving loop; a middleware
        that raises anything else refuses the request (-32603) and is logged."""
        around = Around(fn, self)
        self._native.add_middleware(around.start, around.name)
        return fn

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
        task_support: TaskSupport = "never",
        run_in_thread: bool = True,
        ui_resource: Optional[str] = None,
        visibility: Optional[list[Visibility]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as a tool.

        The input schema comes from the type hints and defaults unless `input_schema` is given;
        the description from the docstring (its `Args:` section describes the parameters).
        Returning a dict, dataclass, TypedDict or pydantic model gives `structuredContent`
        (with an `outputSchema` from the return annotation); a str gives text; a dict that is
        a whole `CallToolResult` (a `content` list of blocks) is that result.

        `task_support="optional"` lets a 2026-07-28 client that declares the tasks extension
        get the call as a task when it runs a while or asks the client something
        (`"required"`: only as a task). The function does not change: inside a task
        `await ctx.elicit(...)` waits for the client's `tasks/update`.

        A plain `def` runs on a worker thread, so that one that blocks never stalls serving.
        `run_in_thread=False` (the standalone `fastmcp` package's name) runs it where its call is
        answered, without that hop: on the engine's thread, or mounted (`asgi_app()`) usually on
        the app's event loop thread. That is much faster for a function that returns at once,
        and wrong for one that waits (on I/O, a lock, `time.sleep`): nothing else is served
        meanwhile, and no deadline can end it (`timeout=` with it is a `ValueError`). It is not
        a way to pin a thread. No effect on `async def` tools.

        MCP Apps: `ui_resource="ui://…"` links the tool to a view registered before it with
        `add_ui_resource`; `visibility=["app"]` makes it a tool only the view calls (not
        offered to clients that render no views; the default is both `"model"` and `"app"`).

        `required_scopes` / `required_tags`: only clients whose token holds every one of them
        see the tool (listed, callable); to the rest it does not exist (see `visible_when`).
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
                task_support=task_support,
                run_in_thread=run_in_thread,
                ui_resource=ui_resource,
                visibility=visibility,
                required_scopes=required_scopes,
                required_tags=required_tags,
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
        task_support: TaskSupport = "never",
        run_in_thread: bool = True,
        ui_resource: Optional[str] = None,
        visibility: Optional[list[Visibility]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> None:
        """Registers `fn` as a tool (see `tool`); while serving, clients get `list_changed`."""
        signature = analyse(fn, Context, (ToolResult, *BLOCKS))
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
        if task_support != "never":
            definition["taskSupport"] = task_support
        # MCP Apps' link: written into `_meta` (both forms hosts read) and checked by the engine.
        if ui_resource is not None:
            definition["uiResource"] = ui_resource
        if visibility is not None:
            definition["visibility"] = list(visibility)
        _requirements(definition, required_scopes, required_tags)
        renamed = signature.renamed if input_schema is None else {}
        invoke, is_async = _wrap(
            fn, signature.context_param, params, renamed, signature.defaults, self._lifespan, definition["name"]
        )
        timeout_ms = millis("timeout", timeout)
        if not run_in_thread and not is_async and timeout_ms is not None:
            # Run in place, it answers within the poll that starts it: no deadline can end it.
            raise ValueError(
                f"tool {definition['name']!r}: timeout= needs run_in_thread=True (a function run in "
                "place cannot be stopped by a deadline; give it a worker thread or make it async def)"
            )
        if is_async:
            self._async_tools = True
            # (A loop bound before, by a session, may have closed since.)
            if self._serving_without_loop and (self._loop is None or self._loop.is_closed()):
                self._bind_loop()
        self._native.add_tool(definition, invoke, is_async, timeout_ms, max_concurrency, bool(run_in_thread))

    def remove_tool(self, name: str) -> bool:
        """Removes a tool; False if there was none of that name."""
        return self._native.remove_tool(name)

    def tool_names(self) -> list[str]:
        """The registered tool names, sorted."""
        return self._native.tool_names()

    def run(self) -> None:
        """Serves stdio until stdin ends or Ctrl-C (blocking).

        A server with an `async def` tool or a lifespan serves on an asyncio loop of its own, in
        this thread. A server of plain functions serves with no loop, and asyncio is not
        imported (on a small machine that is tens of milliseconds of every start); its
        `async def` resources, prompts and middleware, if any, run on a loop in a daemon
        thread, started when first needed, as does a tool `async def` added while it serves.
        """
        with contextlib.suppress(KeyboardInterrupt):
            if self._async_tools or self._lifespan.factory is not None:
                _run_on_new_loop(self.run_async())
            else:
                self._serve_stdio_without_loop()

    def stop(self) -> None:
        """Ends everything this server serves: a running `run()` / `run_async()` and every
        HTTP server it started (`serve_http()`, `run_http()`). Reading and accepting stop;
        calls in flight finish. An `HttpServer`'s own `stop()` ends just that one."""
        self._native.stop()

    async def run_async(self) -> None:
        """Serves stdio inside a running asyncio loop; `async def` tools run on this loop.

        While serving, `print` and anything else written to `sys.stdout` goes to stderr:
        stdout carries the protocol only. Stdin is served once at a time in a process: while
        another serve (of any server) reads it, this raises `BusyError`.
        """
        _logs.follow_level()
        async with self:  # the lifespan, around serving
            await self._serve_stdio()

    def _serve_stdio_without_loop(self) -> None:
        _logs.follow_level()
        stop = _native.StopSignal()
        failed: list[BaseException] = []
        served = threading.Event()

        def serve() -> None:
            try:
                self._native.serve_stdio(None, stop)
            except BaseException as exc:
                failed.append(exc)
            finally:
                served.set()

        # The engine serves on a thread of its own while this one waits on an Event, in short
        # waits: Ctrl-C interrupts none of a native call, of a lock wait on Windows before
        # Python 3.14, or (usably) of `Thread.join()` on 3.11, which takes the thread for ended.
        self._serving_without_loop += 1
        try:
            if self._async_tools and (self._loop is None or self._loop.is_closed()):
                self._bind_loop()  # an `async def` tool was added since `run()` looked
            # Redirect before serving starts: a call may run as soon as the first line is read.
            with contextlib.redirect_stdout(sys.stderr):
                thread = threading.Thread(target=serve, name="toolwire-stdio")
                try:
                    # Inside the try: a Ctrl-C can land in `start()` itself, after the thread
                    # was spawned (it waits for the thread to begin), and must stop it too.
                    thread.start()
                    while not served.wait(0.25):
                        pass
                except BaseException:
                    # Ctrl-C, or a signal handler's SystemExit: as under a loop, stop reading;
                    # calls in flight finish. The stop is kept, so a thread that has not yet
                    # reached the serve ends at once; one that never began has nothing to wait for.
                    stop.stop()
                    while thread.ident is not None and not served.wait(0.25):
                        pass
                    raise
        finally:
            self._serving_without_loop -= 1
        if failed:
            raise failed[0]

    async def _serve_stdio(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        bridge = self._native.bridge(loop)
        loop.add_reader(bridge.fileno(), bridge.drain)
        # A serve refused with BusyError must leave the one that holds stdin as it was.
        previous_loop, self._loop = self._loop, loop
        stop = _native.StopSignal()
        try:
            # Redirect before serving starts: a call may run as soon as the first line is read.
            with contextlib.redirect_stdout(sys.stderr):
                serving = loop.run_in_executor(None, self._native.serve_stdio, bridge, stop)
                try:
                    await asyncio.shield(serving)
                except asyncio.CancelledError:
                    # Ctrl-C under asyncio.run, or the caller cancelled us: stop reading, and keep
                    # this loop running while calls in flight (some on it) drain, as at end of input.
                    stop.stop()
                    with contextlib.suppress(Exception):
                        await serving
                    raise
        finally:
            loop.remove_reader(bridge.fileno())
            if self._loop is loop:
                self._loop = previous_loop

    def session(self) -> Session:
        """A session for a transport of your own (and for tests).

        `async def` tools run on the running loop if called from one, otherwise on a private
        loop in a daemon thread. It holds nothing: its first call starts the `lifespan`, which
        runs until `stop()`; hold it around your transport with `async with server:`.
        """
        loop, bridge = self._bind_loop()
        return Session(self._native.session(bridge), self, (loop, bridge))

    def _bind_loop(self, private: bool = False) -> tuple[asyncio.AbstractEventLoop, Any]:
        """Runs `async def` tools on the running loop (unless `private`), or on a private one."""
        import asyncio

        _logs.follow_level()
        try:
            loop = self._private_loop() if private else asyncio.get_running_loop()
        except RuntimeError:
            loop = self._private_loop()
        bridge = self._native.bridge(loop)
        # add_reader is not thread-safe: schedule it on the loop (a wake-up written before it
        # runs waits in the socket).
        loop.call_soon_threadsafe(loop.add_reader, bridge.fileno(), bridge.drain)
        self._native.use_bridge(bridge)
        self._loop = loop
        return loop, bridge
