"""toolwire: register Python functions as MCP tools; a Rust engine speaks the protocol.

from toolwire import Server

server = Server("weather", "1.0.0")

@server.tool()
def forecast(city: str, days: int = 3) -> dict:
    \"\"\"Forecast for a city.\"\"\"
    return {"city": city, "celsius": [20.5] * days}

server.run()
"""

# Only re-exports: the API is defined in private modules, one concern each (each module's
# docstring says what it holds and why it is apart). Each imports only modules above it
# (right column), so there is no import cycle:
#   _native   the Rust engine (PyO3 extension), its exceptions          -
#   _logs     the engine's own logs into `logging` (a daemon thread)    _native
#   _loop     the asyncio event loop toolwire serves on                 -
#   _schema   JSON Schema from type hints; arguments back into types    -
#   _content  content blocks, ToolResult, ToolError; values as results  -
#   _context  Context: a request's way back to the client                _native
#   _base     what Server's parts share (engine, loops); the logger     _native, _loop, _logs
#   _catalog  resources, prompts, completion (CatalogMixin)             _native, _base, _content, _context
#   _asgi     the HTTP endpoint as an ASGI app (AsgiApp)                 _native, _base, _logs
#   _middleware  middleware around every request (Around, RequestInfo)      _base, _content
#   _http     Streamable HTTP (HttpMixin), HttpServer                   _native, _base, _loop, _logs, _asgi
#   _server   Server (tools, stdio; + the mixins), Session              all of the above
#
# asyncio is imported only where a loop is used: `import toolwire`, and serving stdio with plain
# functions as tools, never import it (tens of milliseconds of a start on a small machine).

from ._asgi import AsgiApp
from ._base import F as F
from ._base import logger as logger
from ._catalog import CatalogItem, Mount, ResourceNotFound, Viewer
from ._content import (
    Audio,
    EmbeddedResource,
    Image,
    InputRequired,
    ProtocolError,
    ResourceLink,
    Round,
    Text,
    ToolError,
    ToolResult,
)
from ._content import Block as Block
from ._context import Context
from ._http import HttpServer
from ._middleware import CallNext, Outcome, Request, RequestInfo
from ._native import (
    BusyError,
    CapabilityError,
    ClientRequestError,
    InputRequiredError,
    RegistrationError,
    SessionClosedError,
    ToolwireError,
    TransportError,
)
from ._schema import analyse, converter  # noqa: F401 (importable from here before the split)
from ._server import Server, Session, TaskSupport, Visibility

__all__ = [
    "AsgiApp",
    "Audio",
    "CallNext",
    "Outcome",
    "Request",
    "RequestInfo",
    "BusyError",
    "HttpServer",
    "ResourceNotFound",
    "CatalogItem",
    "Viewer",
    "CapabilityError",
    "ClientRequestError",
    "Context",
    "EmbeddedResource",
    "Image",
    "InputRequired",
    "InputRequiredError",
    "Mount",
    "ProtocolError",
    "RegistrationError",
    "ResourceLink",
    "Round",
    "Server",
    "TaskSupport",
    "Visibility",
    "Session",
    "SessionClosedError",
    "Text",
    "ToolError",
    "ToolResult",
    "ToolwireError",
    "TransportError",
]
