"""The engine's own logs, in Python's `logging`: every record of the Rust engine is logged on
the `toolwire` logger or one under it (a target `toolwire::dispatch::router` on
`toolwire.dispatch.router`; a target outside the engine under `toolwire.` too).

Levels: ERROR, WARNING, INFO and DEBUG as named; the engine's TRACE is level 5. The engine
produces what the `toolwire` logger's effective level keeps, read at import, when a `Server`
is made, when it starts serving (stdio, HTTP, a session), and then about once a second: set
the `toolwire` logger's level before creating or starting the server for it to count at once.

The engine queues its records (a bounded queue: past 1024 waiting, records are dropped and a
warning says how many), and a daemon thread, `toolwire-logs`, takes them with the GIL
released and logs them: an engine thread never waits for the GIL. Records left at exit are
logged then. Nothing here writes to stdout, which carries the protocol on stdio.
"""

from __future__ import annotations

import atexit
import logging
import threading

from . import _native

# How long the thread waits for records before it reads the logger's level again (seconds).
_POLL = 1.0
# How long exit waits for the records left to be logged (seconds).
_EXIT_WAIT = 2.0

_root = logging.getLogger("toolwire")


def follow_level() -> None:
    """Makes the engine produce what the `toolwire` logger's effective level keeps."""
    _native.set_log_level(_root.getEffectiveLevel())


def logger_for(target: str) -> logging.Logger:
    """The logger of an engine target: `::` becomes `.`, and all are under `toolwire`."""
    name = target.replace("::", ".")
    if name != "toolwire" and not name.startswith("toolwire."):
        name = f"toolwire.{name}"
    return logging.getLogger(name)


def _pump() -> None:
    while True:
        records = _native.next_logs(_POLL)
        if records is None:
            return
        for level, target, message in records:
            log = logger_for(target)
            if log.isEnabledFor(level):
                # The message as it is (no %-formatting), from the engine rather than this file.
                log.handle(log.makeRecord(log.name, level, "(toolwire engine)", 0, message, (), None))
        follow_level()


def _stop(thread: threading.Thread) -> None:
    _native.close_logs()
    thread.join(_EXIT_WAIT)


def start() -> None:
    """Starts the thread that logs the engine's records (once, at import)."""
    follow_level()
    thread = threading.Thread(target=_pump, name="toolwire-logs", daemon=True)
    thread.start()
    atexit.register(_stop, thread)


start()
