"""`Context`, what a tool gets besides its arguments: progress, logging, cancellation, and
requests back to the client.

A thin layer over the engine's `NativeContext`; of the package it imports only `_native`, so
`_server` can build one per call without an import cycle.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Union

from . import _native


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
        return await self._client("roots", {}, timeout)

    async def wait_cancelled(self) -> None:
        """Completes when the call is cancelled."""
        await self._native.wait_cancelled(asyncio.get_running_loop())

    async def _client(self, kind: str, params: dict[str, Any], timeout: Optional[float]) -> Any:
        timeout_ms = None if timeout is None else int(timeout * 1000)
        return await self._native.client_request(kind, params, asyncio.get_running_loop(), timeout_ms)
