"""For the interop tests: watching a server's stderr for a line, as an event."""

from __future__ import annotations

import re
import threading
from typing import IO, Optional


class LogWatch:
    """A server's stderr, read on a thread as it comes; `wait_for` blocks until a line matches
    (or the stream ends), woken by each new line rather than by polling."""

    def __init__(self, open_stream) -> None:
        """`open_stream()` returns the binary stream to read (it may block, as opening a FIFO
        does until the server opens its end)."""
        self._text = ""
        self._ended = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(open_stream,), name="log-watch", daemon=True).start()

    def _read(self, open_stream) -> None:
        try:
            stream: IO[bytes] = open_stream()
            with stream:
                for line in stream:
                    with self._changed:
                        self._text += line.decode(errors="replace")
                        self._changed.notify_all()
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            return self._text

    def wait_for(self, pattern: str, timeout: float) -> Optional[re.Match[str]]:
        """The first match of `pattern` in the log, waiting up to `timeout` seconds for it;
        None if the stream ended or the time ran out first."""
        regex = re.compile(pattern)
        with self._changed:
            self._changed.wait_for(lambda: regex.search(self._text) or self._ended, timeout)
            return regex.search(self._text)
