from toolwire import ProtocolError, Server

server = Server("guarded", "1.0.0")
audit: list[str] = []


@server.tool()
def ping() -> str:
    return "pong"


@server.tool()
def wipe() -> str:
    return "wiped"


@server.middleware
async def staff_only(request, call_next):
    # Before call_next(): decide. request.principal is the bearer token's subject over HTTP.
    if request.name == "wipe" and request.principal not in {"ada", "grace"}:
        raise ProtocolError(-32001, "Forbidden")  # this JSON-RPC error instead of the call
    outcome = await call_next()  # handled here; returns once the answer is sent
    audit.append(f"{request.method} {request.name}: {outcome.kind}")


if __name__ == "__main__":
    server.run()
