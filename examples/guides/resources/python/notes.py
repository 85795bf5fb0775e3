from typing import Literal

from toolwire import ResourceNotFound, Server

server = Server("notes", "1.0.0")
NOTES = {"2026-11-22": "Busy: three meetings.", "2026-11-23": "Quiet."}


@server.resource("notes://readme", mime_type="text/plain")
def readme() -> str:
    return "One note a day, at notes://day/{date}."


@server.resource("notes://day/{date}", name="notes of a day", mime_type="text/plain")
def day(date: str) -> str:  # a template: its variables are keyword arguments
    if date not in NOTES:
        raise ResourceNotFound(f"no notes on {date}")  # the client gets -32002
    return NOTES[date]


@server.completion(template="notes://day/{date}")
def dates(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [date for date in NOTES if date.startswith(value)]


@server.prompt()
def summarize(date: str, tone: Literal["short", "detailed"] = "short") -> str:
    """Summarize a day's notes.

    Args:
        date: The day, as YYYY-MM-DD.
        tone: How long the summary may be.
    """
    return f"Summarize the notes of {date} ({tone}): {NOTES.get(date, 'none')}"


if __name__ == "__main__":
    server.run()
