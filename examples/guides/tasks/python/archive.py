from toolwire import Context, Server

# Finished tasks are kept 15 minutes for their clients to fetch (default: an hour), and clients
# are told to poll every 100 ms: a confirmation is quick (default: every second).
server = Server("archive", "1.0.0", task_ttl=15 * 60, task_poll_interval=0.1)
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool(task_support="optional")  # a task for clients that can follow one
async def archive(folder: str, ctx: Context) -> str:
    """Archives a folder once the user confirms."""
    answer = await ctx.elicit({"message": f"Archive {folder}?", "requestedSchema": CONFIRM})
    if answer["action"] != "accept" or not answer["content"]["confirm"]:
        return f"{folder} left as it was."
    await ctx.report_progress(1, 2, "packing")  # in a task: its status message
    return f"Archived {folder}."


if __name__ == "__main__":
    server.run()
