import asyncio
from typing import Any, Optional

from toolwire import Server

server = Server("notes", "1.0.0")
# What your authorization server issued (in a real app: verify a JWT, or ask the server).
TOKENS = {"secret-ada": {"subject": "ada", "scopes": ["notes"]}, "secret-guest": {"subject": "guest", "scopes": []}}


def check_token(token: str) -> Optional[dict[str, Any]]:
    grant = TOKENS.get(token)
    if grant is None:
        return None  # 401: invalid or expired
    if "notes" not in grant["scopes"]:
        return {"insufficientScope": "notes"}  # 403, naming the scope it lacks
    return grant  # the subject is the caller's principal (middleware, per-principal limits)


@server.tool()
def count_notes() -> int:
    return 3


async def main() -> None:
    http = await server.serve_http(
        "127.0.0.1",
        8000,
        token_validator=check_token,
        authorization_servers=["https://auth.example.com"],  # named in the metadata clients read
    )
    await http.wait()


if __name__ == "__main__":
    asyncio.run(main())
