import asyncio

from toolwire import Context, Server

server = Server("notes", "1.0.0")
notes: list[str] = []


@server.tool()
async def add_note(text: str, ctx: Context) -> str:
    """Adds a note; its progress goes on the call's SSE stream."""
    await ctx.report_progress(1, 1, "saved")
    notes.append(text)
    return f"{len(notes)} notes"


async def main() -> None:
    # The engine serves HTTP itself (no ASGI server needed): http://127.0.0.1:8000/mcp.
    http = await server.serve_http("127.0.0.1", 8000)
    print(f"serving {http.url}")
    await http.wait()  # until Ctrl-C, or server.stop()


if __name__ == "__main__":
    asyncio.run(main())
