"""The native engine module. Use the `toolwire` package's API; these are its building blocks."""

from typing import Any, Callable, Optional, Union

class ToolwireError(Exception):
    """Base class of the engine's errors."""

class RegistrationError(ToolwireError):
    """A definition was refused: a tool, resource, resource template, prompt or completion that
    cannot be read, or whose name or URI is already registered."""

class CapabilityError(ToolwireError):
    """The client did not declare the capability a request to it needs."""

class ClientRequestError(ToolwireError):
    """The client answered a request with an error."""

    code: int
    data: Any

class SessionClosedError(ToolwireError):
    """The session ended before the operation finished."""

class TransportError(ToolwireError):
    """Reading or writing the transport failed."""

class BusyError(ToolwireError):
    """What the operation needs is already in use: stdin is served by one serve at a time in a
    process, so a second `run()` / `run_async()` (of any server) fails with this."""

class InputRequiredError(BaseException):
    """2026-07-28: the client's input is needed first; let it end the tool (the engine asks)."""

class NativeContext:
    """One tool call's context."""

    @property
    def is_cancelled(self) -> bool: ...
    @property
    def wants_progress(self) -> bool: ...
    @property
    def request_id(self) -> Union[int, str]: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def client_info(self) -> Optional[dict[str, Any]]: ...
    @property
    def client_capabilities(self) -> dict[str, Any]: ...
    def client_extension(self, id: str) -> Any: ...
    @property
    def client_renders_apps(self) -> bool: ...
    @property
    def input_responses(self) -> dict[str, Any]: ...
    @property
    def request_state(self) -> Optional[str]: ...
    @property
    def trace_context(self) -> dict[str, Optional[str]]: ...
    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> bool: ...
    def log(self, level: str, data: Any, logger: Optional[str] = None) -> bool: ...
    def close_sse_stream(self) -> None: ...
    def client_request(self, kind: str, params: Any, event_loop: Any, timeout_ms: Optional[int] = None) -> Any:
        """`kind` is "sample", "elicit" or "roots"; returns an asyncio future of the result
        (for "roots", the list of roots)."""
    def ask_all(self, questions: list[tuple[str, Any]], event_loop: Any, timeout_ms: Optional[int] = None) -> Any:
        """`(method, params)` questions at once; returns an asyncio future of their results."""
    def request(self, method: str, params: Any, event_loop: Any, timeout_ms: Optional[int] = None) -> Any:
        """Any request to the client; returns an asyncio future of its result."""
    def cancelled(self, event_loop: Any) -> Any:
        """An asyncio future that completes when the call is cancelled."""

class InputRequiredAnswer:
    """A tool's `InputRequired` on its way to the engine: its JSON, kept apart from data."""

    def __init__(self, value: dict[str, Any]) -> None: ...

class LifespanDone:
    """Called once when the lifespan's start or stop has ended: `error` says why it failed."""

    def __call__(self, error: Optional[str] = None) -> None: ...

class NativeLifespanHold:
    """One serve's hold on the server's lifespan."""

    def release(self, done: Callable[[], None]) -> None:
        """Lets go; `done()` is called on an engine thread once it has (for the last hold,
        after the clean-up ran)."""

class CallDone:
    """Where an `async def` tool's coroutine hands its outcome as it ends."""

    def ok(self, result: Any) -> None:
        """`result`: the returned value, Python types converted (core's rule decides its meaning)."""
    def fail(self, exception: BaseException) -> None: ...

class LoopBridge:
    """Hands `async def` calls to an asyncio loop: `loop.add_reader(bridge.fileno(), bridge.drain)`."""

    def fileno(self) -> int: ...
    def drain(self) -> None: ...

class NativeSession:
    """A session for a transport of the caller's own."""

    def handle_frame(self, frame: bytes) -> None: ...
    def recv(self, timeout: float = 10.0) -> Optional[str]: ...
    def shutdown(self) -> None: ...
    def close(self) -> None:
        """Ends the session at once: calls cancelled, nothing more sent; returns once they ended."""
    @property
    def protocol_version(self) -> Optional[str]: ...

class NativeClient:
    """Core's in-process client. Each method returns at once; `done(kind, payload)` hears its
    outcome later, on a thread of the client's: "ok" (the result as JSON text), "rpc" (the
    JSON-RPC error object as JSON text) or "error" (an exception)."""

    def request(self, method: str, params: str, timeout: float, done: Callable[[str, Any], None]) -> None: ...
    def request_answering_input(
        self,
        method: str,
        params: str,
        done: Callable[[str, Any], None],
        progress: Optional[Callable[[str], None]] = None,
    ) -> None: ...
    def list_all(self, method: str, key: str, done: Callable[[str, Any], None]) -> None: ...
    def complete(
        self, reference: str, argument: str, value: str, context: Optional[str], done: Callable[[str, Any], None]
    ) -> None: ...
    def close(self, done: Callable[[str, Any], None]) -> None:
        """Ends the session (calls in flight first) and lets core's client go."""
    def notifications(self) -> str: ...
    def on_notification(self, heard: Callable[[str], None]) -> None: ...

class ClientReply:
    """The answer to one question of the server's (delivered as "ask")."""

    def ok(self, result: str) -> None: ...
    def fail(self, code: int, message: str, data: Optional[str] = None) -> None: ...

class NativeHttpServer:
    """A running Streamable HTTP server."""

    @property
    def url(self) -> str: ...
    def stop(self) -> None: ...
    def wait(self) -> None:
        """Blocks until the server stopped and its sessions ended."""

class NativeHttpEndpoint:
    """The Streamable HTTP endpoint of an app of the host's own (the ASGI app)."""

    def exchange(
        self, method: str, target: str, headers: list[tuple[bytes, bytes]], peer: Optional[str], waited: float = 0.0
    ) -> NativeExchange:
        """Starts answering one request; its body follows through the exchange (`waited`: seconds
        the app waited for it already, which the body timeout counts)."""
    def answer(
        self, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes, peer: Optional[str]
    ) -> NativeExchange:
        """Answers one request whose body is whole; complete at once when no Python handler is needed."""
    @property
    def body_read_timeout(self) -> Optional[float]:
        """Seconds a client may take to send a body (`None`: no limit)."""
    def shutdown(self) -> None:
        """Ends every session (calls in flight finish first); blocks."""

class NativeExchange:
    """One request being answered; each `settle(value)` is called from the engine's thread."""

    def send_body(self, chunk: bytes, settle: Callable[[bool], None]) -> None: ...
    def try_send_body(self, chunk: bytes) -> Optional[bool]:
        """Whether the engine took the chunk now; `None`: no room (then `send_body`)."""
    def end_body(self) -> None: ...
    def abort_body(self) -> None: ...
    def complete_response(self) -> Optional[tuple[int, list[tuple[bytes, bytes]], bytes]]:
        """The whole response when `answer` completed it at once."""
    def ready_response(self) -> Optional[tuple[int, list[tuple[bytes, bytes]], Optional[bytes]]]:
        """The head now, if ready (`body`: `None` when it streams); `None`: wait with `response`."""
    def ready_chunks(self, max_bytes: int) -> tuple[bytes, bool]:
        """The streamed body's chunks ready now, joined, and whether it ended."""
    def response(self, settle: Callable[[Any], None]) -> None:
        """`settle((status, [(name, value), ...], body or None))`; `settle(None)` if the client hung up first."""
    def next_chunk(self, settle: Callable[[Optional[bytes]], None]) -> None: ...
    def close(self) -> None:
        """The client hung up."""

class StopSignal:
    """Ends one serve (`serve_stdio`'s `stop`) from any thread."""

    def __init__(self) -> None: ...
    def stop(self) -> None: ...

class NativeServer:
    """The engine's server."""

    def __init__(
        self,
        name: str,
        version: str,
        instructions: Optional[str] = None,
        title: Optional[str] = None,
        page_size: Optional[int] = None,
        default_tool_timeout_ms: Optional[int] = None,
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
        task_after_ms: Optional[int] = None,
        task_ttl_ms: Optional[int] = None,
        task_poll_interval_ms: Optional[int] = None,
        max_tasks: Optional[int] = None,
        max_tasks_per_principal: Optional[int] = None,
    ) -> None: ...
    def metrics(self) -> dict[str, Any]: ...
    def metrics_text(self) -> str: ...
    def add_tool(
        self,
        definition: dict[str, Any],
        func: Callable[..., Any],
        is_async: bool,
        timeout_ms: Optional[int] = None,
        max_concurrency: Optional[int] = None,
        in_thread: bool = True,
    ) -> None:
        """`func(ctx, arguments)` returns the tool's value (Python types converted); with `is_async`,
        `func(ctx, arguments, done)` is a coroutine that ends by calling `done.ok(result)` or
        `done.fail(exception)`. A sync `func` runs on the Python threads unless `in_thread` is
        false (then where its call is polled)."""
    def stop(self) -> None:
        """Ends every serve of this server: stdio and each HTTP server it started."""
    def remove_tool(self, name: str) -> bool: ...
    def tool_names(self) -> list[str]: ...
    def bridge(self, event_loop: Any) -> LoopBridge: ...
    def use_bridge(self, bridge: LoopBridge) -> None: ...
    def serve_stdio(self, bridge: Optional[LoopBridge], stop: StopSignal) -> None:
        """Serves stdio until end of input, `stop.stop()` or `stop()`; raises BusyError while
        stdin is served already."""
    def session(self, bridge: LoopBridge) -> NativeSession: ...
    def set_lifespan(self, hooks: Optional[Any] = None) -> None:
        """The lifespan's hooks: `hooks.start(done)` and `hooks.stop(done)`, called on an engine
        thread, each calling `done(error=None)` once it has ended."""
    def hold_lifespan(self, done: Callable[[Optional[NativeLifespanHold], Optional[str]], None]) -> None:
        """Holds the lifespan (started first); `done(hold, error)` is called on an engine thread."""
    def replay_vector(self, bridge: LoopBridge, case: str) -> Optional[str]:
        """Replays one golden wire vector case on a new session: why it failed, or None."""
    def client(
        self,
        bridge: LoopBridge,
        options: str,
        ask: Callable[[str, str, ClientReply], None],
        done: Callable[[str, Any], None],
    ) -> NativeClient: ...
    def add_resource(
        self, definition: dict[str, Any], func: Callable[[dict[str, Any]], Any], template: bool
    ) -> None: ...
    def add_prompt(self, definition: dict[str, Any], func: Callable[[dict[str, Any]], Any]) -> None: ...
    def set_completer(self, kind: str, name: str, func: Callable[[dict[str, Any]], Any]) -> None: ...
    def remove_resource(self, uri: str) -> bool: ...
    def remove_prompt(self, name: str) -> bool: ...
    def notify_resource_updated(self, uri: str) -> None: ...
    def add_skill(self, path: str, skill_md: bytes, files: list[tuple[str, bytes]]) -> None: ...
    def add_ui_resource(self, definition: dict[str, Any]) -> None: ...
    def load_skills(self, root: str) -> int: ...
    def watch_skills(self, root: str, interval_ms: int) -> int: ...
    def remove_skill(self, path_or_uri: str) -> bool: ...
    def declare_extension(self, id: str, settings: dict[str, Any]) -> None: ...
    def visible_when(self, func: Callable[[dict[str, Any]], dict[str, Any]]) -> None: ...
    def visibility_changed(self) -> None: ...
    def tool_search(self, settings: Optional[dict[str, Any]]) -> None: ...
    def mount(
        self,
        prefix: str,
        inner: Optional[NativeServer] = None,
        settings: Optional[dict[str, Any]] = None,
        protocol_version: Optional[str] = None,
    ) -> NativeMount: ...
    def serve_http(
        self,
        bridge: LoopBridge,
        host: str,
        port: int,
        path: str,
        stateless: bool,
        response_mode: Optional[str],
        json_response: bool,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        max_sessions: Optional[int],
        max_sessions_per_client: Optional[int],
        session_idle_timeout_ms: Optional[int],
        header_read_timeout_ms: Optional[int],
        body_read_timeout_ms: Optional[int],
        max_connections: Optional[int],
        max_sse_buffered_bytes: Optional[int],
        token_validator: Optional[Callable[[dict[str, Any]], Any]],
        authorization_servers: list[str],
        resource_url: Optional[str],
        metrics_path: Optional[str] = None,
    ) -> NativeHttpServer: ...
    def add_middleware(self, start: Callable[[dict[str, Any], AroundCall], None], name: str) -> None:
        """`start(request, call)` returns at once; the middleware reports through `call`. The
        engine decides what its ending means; `name` names it in refusals and logs."""

    def http_endpoint(
        self,
        bridge: LoopBridge,
        path: str,
        stateless: bool,
        response_mode: Optional[str],
        json_response: bool,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        max_sessions: Optional[int],
        max_sessions_per_client: Optional[int],
        session_idle_timeout_ms: Optional[int],
        body_read_timeout_ms: Optional[int],
        max_sse_buffered_bytes: Optional[int],
        token_validator: Optional[Callable[[dict[str, Any]], Any]],
        authorization_servers: list[str],
        resource_url: Optional[str],
    ) -> NativeHttpEndpoint: ...

# The engine's own logs (`toolwire._logs` drives these).
def set_log_level(level: int) -> None:
    """The engine produces what a logger at this effective `logging` level keeps."""

def next_logs(timeout: float) -> Optional[list[tuple[int, str, str]]]:
    """Up to 256 `(logging level, target, message)` records, waiting up to `timeout` seconds
    (GIL released) for the first: `[]` when none came, `None` once closed and empty."""

def close_logs() -> None:
    """Ends the engine's logs for the process (at exit): `next_logs` returns what is left."""

class AroundCall:
    """One request's way through a middleware: it reports here."""

    def next(self, on_end: Callable[[dict[str, Any]], None]) -> None:
        """`call_next()` was called: `on_end({"kind", "code"?, "elapsed"})` follows (on an
        engine thread) once the answer is out. RuntimeError when called twice, or after the
        verdict was out."""

    def finish(self, report: Optional[dict[str, Any]]) -> None:
        """The middleware ended: `None` (it returned), `{"refuse": {"code", "message"}}`,
        `{"toolError": text}` or `{"failed": text}`."""

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled the request before the middleware decided."""

class NativeMount:
    @property
    def prefix(self) -> str: ...
    def registered(self) -> list[str]: ...
    def refresh(self) -> None: ...
    def unmount(self) -> None: ...
