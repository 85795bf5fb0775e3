"""What a tool hands back: content blocks, `ToolResult`, `ToolError`, and the conversion of any
return value into the wire's `CallToolResult`.

It depends on nothing else in the package, so that every other module may import it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, ClassVar, Optional, Union


class ToolError(Exception):
    """Raise it in a tool to give the model an `isError` result with this message.

    Any other exception does the same, and its traceback goes to the log.
    """


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


BLOCKS = (Text, Image, Audio, ResourceLink, EmbeddedResource)


def plain(value: Any) -> Any:
    """A return value as plain JSON data: dataclasses, models, enums, tuples and sets inside."""
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
    return value


def call_result(value: Any) -> dict[str, Any]:
    """A tool's return value as a CallToolResult dict."""
    if isinstance(value, ToolResult):
        return value.to_json()
    if isinstance(value, BLOCKS):
        return {"content": [value.to_json()]}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, BLOCKS) for v in value):
        return {"content": [v.to_json() for v in value]}
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    value = plain(value)
    if isinstance(value, dict):
        return {"structuredContent": value}
    return {"content": [{"type": "text", "text": json.dumps(value, separators=(",", ":"), default=str)}]}
