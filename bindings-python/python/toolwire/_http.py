"""Streamable HTTP: the `Server` methods that serve it (`HttpMixin`) and `HttpServer`, the
handle of a running server.

A mixin over `ServerBase` rather than part of `_server`, so that this concern reads on its own;
it imports `_base`, not `_server`, so there is no import cycle.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional

from . import _logs, _native
from ._asgi import AsgiApp
from ._base import ServerBase, check_counts, logger, millis
from ._loop import run as _run_on_new_loop

if TYPE_CHECKING:
    import asyncio


class HttpMixin(ServerBase):
    """`Server`'s Streamable HTTP serving."""

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        response_mode: Optional[Literal["auto", "json", "sse"]] = None,
        json_response: bool = False,
        allowed_hosts: Optional[list[str]] = None,
        allowed_origins: Optional[list[str]] = None,
        max_sessions: Optional[int] = None,
        max_sessions_per_client: Optional[int] = None,
        session_idle_timeout: Optional[float] = None,
        header_read_timeout: Optional[float] = None,
        body_read_timeout: Optional[float] = None,
        max_connections: Optional[int] = None,
        max_sse_buffered_bytes: Optional[int] = None,
        token_validator: Optional[Callable[[str], Optional[dict[str, Any]]]] = None,
        authorization_servers: Optional[list[str]] = None,
        resource_url: Optional[str] = None,
        metrics_path: Optional[str] = None,
    ) -> HttpServer:
        """Serves Streamable HTTP at `http://host:port/path` and returns the running server's
        handle once it listens (port 0 picks one; see `HttpServer.url`); `async def` tools run
        on the running loop. `await http.wait()` until it stops; `http.stop()` ends it, and the
        server's `stop()` ends it along with everything else the server serves.

        Safe by default: Host and Origin are checked (loopback names for a loopback host, or
        `allowed_hosts` / `allowed_origins`). `stateless` drops sessions (requests to the client
        then fail at once). `response_mode` says how requests are answered: `"auto"` (the
        default) with one JSON body when the answer is ready at once and an SSE stream otherwise,
        `"json"` always with one JSON body, `"sse"` always with an SSE stream;
        `json_response=True` is the official SDK's name for `"json"`. Slow and greedy clients
        are bounded: `header_read_timeout` (seconds to send a request's head, and how long a
        kept-alive connection may idle; default 30), `body_read_timeout` (seconds to send the
        body, then 408; default 30), `max_connections` (default 10,000; one more gets 503);
        0 turns a timeout off. `max_sessions` (default 10,000) bounds live sessions, and
        `max_sessions_per_client` (default 1,000) those of one client: the token's subject, or
        without tokens the peer's address (behind a reverse proxy that is the proxy: raise it
        there). A client at its limit loses its least recently used idle session to a new one,
        or gets 429 when none is idle; a full server makes room from the client holding the
        most sessions the same way, or answers 503. An SSE reader that falls
        `max_sse_buffered_bytes` (default 1 MiB) behind is let go with a `retry:` hint; its
        stream goes on and is resumed with `Last-Event-ID`. With
        `token_validator(token) -> {"subject", "scopes", "tags"} | None` every request needs a
        bearer token (401 otherwise, pointing at the metadata that names `authorization_servers`);
        its scopes and tags decide what the request sees (`required_scopes`, `visible_when`);
        `{"insufficientScope": scope}` refuses a valid token that lacks a scope (403).
        `metrics_path` (e.g. `"/metrics"`) serves `metrics_text()` to GET there, for Prometheus
        (Host and Origin checked, no token asked).
        """
        import asyncio

        check_counts(
            max_sessions=max_sessions,
            max_sessions_per_client=max_sessions_per_client,
            max_connections=max_connections,
            max_sse_buffered_bytes=max_sse_buffered_bytes,
        )
        timeouts = {
            "session_idle_timeout": millis("session_idle_timeout", session_idle_timeout),
            "header_read_timeout": millis("header_read_timeout", header_read_timeout),
            "body_read_timeout": millis("body_read_timeout", body_read_timeout),
        }
        _logs.follow_level()
        # The lifespan first: a failure to start is this call's; `wait()` exits it again.
        await self._lifespan.enter()
        loop = asyncio.get_running_loop()
        bridge = self._native.bridge(loop)
        loop.add_reader(bridge.fileno(), bridge.drain)
        self._loop = loop

        try:
            native = self._native.serve_http(
                bridge,
                host,
                port,
                path,
                stateless,
                response_mode,
                json_response,
                list(allowed_hosts or []),
                list(allowed_origins or []),
                max_sessions,
                max_sessions_per_client,
                timeouts["session_idle_timeout"],
                timeouts["header_read_timeout"],
                timeouts["body_read_timeout"],
                max_connections,
                max_sse_buffered_bytes,
                None if token_validator is None else _token_check(token_validator),
                list(authorization_servers or []),
                resource_url,
                metrics_path,
            )
        except BaseException:
            loop.remove_reader(bridge.fileno())
            await self._lifespan.exit()
            raise
        logger.info("serving MCP at %s", native.url)
        return HttpServer(native, loop, bridge, self._lifespan.exit)

    def asgi_app(
        self,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        response_mode: Optional[Literal["auto", "json", "sse"]] = None,
        json_response: bool = False,
        allowed_hosts: Optional[list[str]] = None,
        allowed_origins: Optional[list[str]] = None,
        max_sessions: Optional[int] = None,
        max_sessions_per_client: Optional[int] = None,
        session_idle_timeout: Optional[float] = None,
        body_read_timeout: Optional[float] = None,
        max_sse_buffered_bytes: Optional[int] = None,
        token_validator: Optional[Callable[[str], Optional[dict[str, Any]]]] = None,
        authorization_servers: Optional[list[str]] = None,
        resource_url: Optional[str] = None,
    ) -> AsgiApp:
        """The Streamable HTTP endpoint as an ASGI application, to mount in Starlette or FastAPI
        (`app.mount("/mcp", server.asgi_app())`) or to run with any ASGI server: the same
        endpoint as `serve_http`, answering on whatever path it is mounted at, streaming its
        answers; a client hanging up ends its response (and cancels a 2026-07-28 request).

        Options as for `serve_http`, less the listener's (connections and head timeouts are the
        ASGI server's). The Host guard has no bound address to go by: unless `allowed_hosts`
        names the app's host names (`"mcp.example.com"`, `"mcp.example.com:443"`), only
        loopback names pass. `path` names the endpoint in OAuth metadata; it is not matched.
        """
        check_counts(
            max_sessions=max_sessions,
            max_sessions_per_client=max_sessions_per_client,
            max_sse_buffered_bytes=max_sse_buffered_bytes,
        )
        options = {
            "path": path,
            "stateless": stateless,
            "response_mode": response_mode,
            "json_response": json_response,
            "allowed_hosts": list(allowed_hosts or []),
            "allowed_origins": list(allowed_origins or []),
            "max_sessions": max_sessions,
            "max_sessions_per_client": max_sessions_per_client,
            "session_idle_timeout_ms": millis("session_idle_timeout", session_idle_timeout),
            "body_read_timeout_ms": millis("body_read_timeout", body_read_timeout),
            "max_sse_buffered_bytes": max_sse_buffered_bytes,
            "token_validator": None if token_validator is None else _token_check(token_validator),
            "authorization_servers": list(authorization_servers or []),
            "resource_url": resource_url,
        }
        return AsgiApp(self, options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serves Streamable HTTP until Ctrl-C or SIGTERM (blocking; runs its own asyncio loop).

        Writes `toolwire: listening on <url>` to stderr once it accepts connections (with port 0,
        the line a launcher reads the port from). Options as for `serve_http`; `stop()` ends it.
        """

        import asyncio

        async def main() -> None:
            http = await self.serve_http(host, port, **options)
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGTERM, http.stop)
            print(f"toolwire: listening on {http.url}", file=sys.stderr, flush=True)
            await http.wait()

        with contextlib.suppress(KeyboardInterrupt):
            _run_on_new_loop(main())


class HttpServer:
    """A running Streamable HTTP server (from `await Server.serve_http(...)`)."""

    def __init__(
        self,
        native: _native.NativeHttpServer,
        loop: asyncio.AbstractEventLoop,
        bridge: Any,
        release: Callable[[], Awaitable[None]],
    ) -> None:
        self._native = native
        self._loop = loop
        self._bridge = bridge
        # Ends this serve's hold on the server's lifespan, once it has stopped.
        self._release: Optional[Callable[[], Awaitable[None]]] = release

    @property
    def url(self) -> str:
        """The endpoint, e.g. `http://127.0.0.1:8000/mcp`."""
        return self._native.url

    def stop(self) -> None:
        """Stops accepting; sessions drain their calls and end (await `wait()`)."""
        self._native.stop()

    async def wait(self) -> None:
        """Until the server stopped; cancelling this stops it (calls in flight still drain).
        Then the server's lifespan ends, unless another serve still holds it."""
        import asyncio

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
            release, self._release = self._release, None
            if release is not None:
                await release()


def _token_check(validate: Callable[[str], Any]) -> Callable[[dict[str, Any]], Any]:
    """The engine's `{"token": ...}` request in, the validator's verdict out."""
    return lambda request: validate(request["token"])
