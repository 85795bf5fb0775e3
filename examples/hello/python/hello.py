from toolwire import Server

server = Server("hello", "1.0.0")


@server.tool()
def greet(name: str) -> str:
    """Greets someone by name."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run()  # serves stdio until the client hangs up
