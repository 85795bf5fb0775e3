import os

from toolwire import Context, Server

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def replica(redis_url: str, state_keys: list[str]) -> Server:
    """One replica: every replica gets the same Redis and the same requestState keys."""
    server = Server("archive", "1.0.0", redis=redis_url, request_state_keys=state_keys)

    @server.tool(task_support="optional")
    async def archive(folder: str, ctx: Context) -> str:
        """Archives a folder once the user confirms."""
        answer = await ctx.elicit({"message": f"Archive {folder}?", "requestedSchema": CONFIRM})
        confirmed = answer["action"] == "accept" and answer["content"]["confirm"]
        return f"Archived {folder}." if confirmed else f"{folder} left as it was."

    return server


if __name__ == "__main__":
    # The first key seals, all open: add the new key second, then move it first, to rotate.
    keys = os.environ["STATE_KEYS"].split(",")
    replica(os.environ["REDIS_URL"], keys).run_http(port=int(os.environ.get("PORT", "8000")))
