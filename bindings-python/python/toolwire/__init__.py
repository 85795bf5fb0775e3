"""toolwire: register Python functions as MCP tools; a Rust engine speaks the protocol.

from toolwire import Server

server = Server("weather", "1.0.0")

@server.tool()
def forecast(city: str, days: int = 3) -> dict:
    \"\"\"Forecast for a city.\"\"\"
    return {"city": city, "celsius": [20.5] * days}

server.run()
"""

# The public API, re-exported from the private modules that define it (only `_server` imports
# several of the others; see each module's docstring):
#   _native   the Rust engine (PyO3 extension) and its exceptions
#   _content  content blocks, ToolResult, ToolError, return values as results
#   _context  Context, a tool call's link back to the client
#   _base     the state Server's parts share (engine, loops), the package logger
#   _catalog  resources, prompts, completion (Server's CatalogMixin), ResourceNotFound
#   _http     Streamable HTTP (Server's HttpMixin), HttpServer
#   _server   Server (tools, stdio) and Session
#   _schema   JSON Schema from type hints; _loop  the asyncio loop toolwire serves on

from ._base import F as F
from ._base import logger as logger
from ._catalog import ResourceNotFound
from ._content import Audio, EmbeddedResource, Image, ResourceLink, Text, ToolError, ToolResult
from ._content import Block as Block
from ._context import Context
from ._http import HttpServer
from ._native import (
    CapabilityError,
    ClientRequestError,
    RegistrationError,
    SessionClosedError,
    ToolwireError,
    TransportError,
)
from ._schema import analyse, converter  # noqa: F401 (importable from here before the split)
from ._server import Server, Session

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
]
