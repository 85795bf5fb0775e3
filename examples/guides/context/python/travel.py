from toolwire import Context, Server

server = Server("travel", "1.0.0")
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool()
async def book(city: str, nights: int, ctx: Context) -> str:
    """Books a hotel once the user confirms the price."""
    await ctx.info({"searching": city})  # a log message, at the level the client set
    for step, doing in enumerate(["searching", "comparing", "holding a room"]):
        await ctx.report_progress(step + 1, 3, doing)  # sent if the client asked for progress
    # Asks the user through the client; a cancelled call raises asyncio.CancelledError here.
    answer = await ctx.elicit({"message": f"Book {nights} nights in {city} for 480 EUR?", "requestedSchema": CONFIRM})
    if answer["action"] != "accept" or not answer["content"]["confirm"]:
        return "Not booked."
    return f"Booked {nights} nights in {city}."


if __name__ == "__main__":
    server.run()
