"""What a tool hands back: content blocks, `ToolResult`, `ToolError`, and the conversion of a
return value's Python types into JSON (what that JSON means is core's one rule).

It depends on nothing else in the package, so that every other module may import it.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, ClassVar, Optional, Union


class InputRequired:
    """2026-07-28 MRTR: the answer of a tool, prompt or resource that needs the client's input
    first. Return it; the engine asks the client, who calls again with the answers (read them in
    `ctx.input_responses`, or a prompt's or resource's `Round`).

    Each question goes under a key unique in this request; `state` comes back in the next round
    (`ctx.request_state`), sealed by the engine so the client can neither read nor alter it::

        return InputRequired().elicit("name", {"message": "Your name?", "requestedSchema": {...}}).with_state("step-1")

    Questions of a kind the client did not declare on this request are left out; if none is
    left, the client gets -32021. In a legacy (initialize) session, use `ctx.elicit` instead.
    """

    __slots__ = ("requests", "state")

    def __init__(self, requests: Optional[dict[str, dict[str, Any]]] = None, state: Optional[str] = None) -> None:
        self.requests: dict[str, dict[str, Any]] = dict(requests or {})
        self.state = state

    def elicit(self, key: str, params: dict[str, Any]) -> InputRequired:
        """Asks the user (`elicitation/create`) under `key`."""
        return self.request(key, "elicitation/create", params)

    def sample(self, key: str, params: dict[str, Any]) -> InputRequired:
        """Asks the client's model (`sampling/createMessage`) under `key`."""
        return self.request(key, "sampling/createMessage", params)

    def list_roots(self, key: str) -> InputRequired:
        """Asks for the client's roots (`roots/list`) under `key`."""
        return self.request(key, "roots/list", {})

    def request(self, key: str, method: str, params: dict[str, Any]) -> InputRequired:
        self.requests[key] = {"method": method, "params": params}
        return self

    def with_state(self, state: str) -> InputRequired:
        """State for the next round (any string; the engine seals it)."""
        self.state = state
        return self

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.requests:
            out["inputRequests"] = self.requests
        if self.state is not None:
            out["requestState"] = self.state
        return out

    def __repr__(self) -> str:
        return f"InputRequired({list(self.requests)}, state={self.state is not None})"


class Round:
    """What a prompt or resource gets besides its arguments: the 2026-07-28 MRTR answers the
    client sent back, and the server's lifespan value. Declare a parameter annotated `Round` to
    receive it (tools read the same from their `Context`)."""

    __slots__ = ("input_responses", "lifespan_context", "request_state")

    def __init__(
        self,
        input_responses: Optional[dict[str, Any]] = None,
        request_state: Optional[str] = None,
        lifespan_context: Any = None,
    ) -> None:
        self.input_responses: dict[str, Any] = input_responses or {}
        self.request_state = request_state
        #: What the server's `lifespan` yielded (None without one).
        self.lifespan_context = lifespan_context

    def __repr__(self) -> str:
        return f"Round({list(self.input_responses)}, state={self.request_state is not None})"


class ToolError(Exception):
    """Raise it in a tool to give the model an `isError` result with this message.

    Any other exception does the same, and its traceback goes to the log.
    """


class ProtocolError(Exception):
    """Raise it in a tool when the call itself failed rather than the tool's work: the client
    gets a JSON-RPC error with `code` (e.g. -32603) instead of an `isError` result, and a task
    ends `failed` instead of `completed`. For what the model should read, raise `ToolError`."""

    # Read by the engine (a marker, not an API).
    __toolwire_protocol_error__ = True

    def __init__(self, code: int, message: str) -> None:
        if isinstance(code, bool) or not isinstance(code, int) or not -(2**31) <= code < 2**31:
            raise TypeError(f"ProtocolError needs a JSON-RPC error code (a 32-bit integer), not {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message


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
    """Full control over a result: content blocks, structured content, error flag, and `meta`
    (the result's `_meta` on the wire)."""

    content: list[Block] = dataclasses.field(default_factory=list)
    structured: Optional[dict[str, Any]] = None
    is_error: bool = False
    meta: Optional[dict[str, Any]] = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": [b.to_json() for b in self.content]}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.is_error:
            result["isError"] = True
        if self.meta is not None:
            result["_meta"] = self.meta
        return result


BLOCKS = (Text, Image, Audio, ResourceLink, EmbeddedResource)


def plain(value: Any) -> Any:
    """A return value as plain JSON data: dataclasses, models, enums, tuples and sets inside;
    values JSON has no type for become their text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    # Anything else JSON has no type for (datetime, Decimal, UUID, Path): its text, as
    # `json.dumps(..., default=str)` would give.
    return str(value)


def call_result(value: Any) -> Any:
    """A tool's return value as JSON data for the engine, which applies core's one rule for
    returned values (`ToolOutput::from_returned`, the same in every language): a str is one
    text block, None no content, a dict that is a whole `CallToolResult` (a `content` list of
    blocks and no other keys than `content`, `structuredContent`, `isError`, `_meta`) that
    result, any other dict structured content, any other value one text block of its JSON.

    Only Python's own types are converted here: a `ToolResult` or content blocks become the
    `CallToolResult` they stand for; dataclasses, models, enums, tuples and sets become data.
    """
    if isinstance(value, ToolResult):
        return value.to_json()
    if isinstance(value, BLOCKS):
        return {"content": [value.to_json()]}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, BLOCKS) for v in value):
        return {"content": [v.to_json() for v in value]}
    return plain(value)
