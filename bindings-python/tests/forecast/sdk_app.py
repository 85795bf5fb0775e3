"""The forecast server of issue #28 written with the official Python SDK (MCPServer, FastMCP before 2.0).
`toolwire_app.py` is the same file for toolwire: the lines ending in `# differs` are the only
difference (test_forecast.py checks that), and the tools/list of both is compared there."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer  # differs
from mcp.server.mcpserver.exceptions import ToolError  # differs
from pydantic import BaseModel, Field


@dataclass
class Stations:
    """What the lifespan holds for the server's lifetime (a database pool in a real server)."""

    by_country: dict[str, dict[str, str]]
    closed: bool = False


@contextlib.asynccontextmanager
async def lifespan(server: Any) -> AsyncIterator[Stations]:
    stations = Stations({"no": {"oslo": "Blindern"}, "fr": {"paris": "Montsouris"}})
    try:
        yield stations
    finally:
        stations.closed = True


server = MCPServer("weather", lifespan=lifespan)  # differs


class Forecast(BaseModel):
    city: str
    station: str
    highs: list[float] = Field(description="Daily highs in °C")


@server.tool()
async def forecast(
    city: Annotated[str, Field(description="City name, e.g. Oslo", min_length=1)],
    ctx: Context,
    days: Annotated[int, Field(ge=1, le=7, description="How many days, 1 to 7")] = 3,
) -> Forecast:
    """Daily forecast for a city."""
    stations = ctx.request_context.lifespan_context.by_country.values()
    station = next((s[city.lower()] for s in stations if city.lower() in s), None)
    if station is None:
        raise ToolError(f"No station for {city}")
    for day in range(days):
        await ctx.report_progress(day + 1, days, f"day {day + 1}")
    return Forecast(city=city, station=station, highs=[20.0 + day for day in range(days)])


@server.resource("weather://stations/{country}", mime_type="text/plain")
def stations(country: str, ctx: Context) -> str:  # differs
    """The weather stations of a country (ISO code), one per line."""
    by_city = ctx.request_context.lifespan_context.by_country.get(country, {})  # differs
    return "\n".join(f"{city}: {name}" for city, name in sorted(by_city.items()))


@server.prompt()
def plan_trip(city: str, days: str = "3") -> str:
    """Plan a trip around the weather."""
    return f"Plan {days} days in {city} around the forecast."
