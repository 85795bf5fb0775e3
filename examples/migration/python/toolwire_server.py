"""The library server of sdk_server.py in toolwire (`pip install toolwire`): the imports, the
constructor and the exception's name change; the functions do not."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from pydantic import Field
from toolwire import Context, ResourceNotFound, Server


@dataclass
class Library:
    books: dict[str, str]  # ISBN -> title


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[Library]:
    library = Library({"9780441013593": "Dune", "9780547928227": "The Hobbit"})  # open a database here
    try:
        yield library
    finally:
        library.books.clear()  # and close it here


mcp = Server("library", version="1.0.0", lifespan=lifespan)


@mcp.tool()
def search(query: str, ctx: Context, limit: int = Field(3, ge=1, le=10, description="Most titles to return")) -> str:
    """Finds the books whose title contains the query."""
    books = ctx.request_context.lifespan_context.books
    found = [title for title in books.values() if query.lower() in title.lower()]
    return ", ".join(found[:limit]) or "nothing found"


@mcp.tool()
async def reindex(shelves: int, ctx: Context) -> str:
    """Re-reads every shelf, reporting progress."""
    for shelf in range(1, shelves + 1):
        await ctx.report_progress(shelf, shelves, f"shelf {shelf}")
        await asyncio.sleep(0.01)
    await ctx.info(f"reindexed {shelves} shelves")
    return f"{len(ctx.request_context.lifespan_context.books)} books on {shelves} shelves"


@mcp.resource("books://{isbn}", mime_type="text/plain")
def book(isbn: str, ctx: Context) -> str:
    """A book's title, by ISBN."""
    books = ctx.request_context.lifespan_context.books
    if isbn not in books:
        raise ResourceNotFound(f"no book {isbn}")
    return books[isbn]


@mcp.prompt()
def review(title: str, tone: str = "friendly") -> str:
    """Asks for a short review of a book."""
    return f"Write a {tone} review of {title} in three sentences."


if __name__ == "__main__":
    mcp.run()  # stdio
