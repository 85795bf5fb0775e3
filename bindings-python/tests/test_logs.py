"""The engine's own logs in Python's `logging`: on `toolwire.*` loggers, levels mapped, the
`toolwire` logger's level obeyed, and never on stdout."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Callable

import pytest
from conftest import INITIALIZE, serve_script
from toolwire import Server, _logs

ROUTER = "toolwire.dispatch.router"
CLIENT_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "the client broke"}}
BOGUS = {"jsonrpc": "2.0", "method": "notifications/bogus"}


class Capture(logging.Handler):
    """Keeps the engine's records; `wait_for` blocks until one matching arrives."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []
        self._arrived = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self._arrived:
            self.records.append(record)
            self._arrived.notify_all()

    def wait_for(self, matches: Callable[[logging.LogRecord], bool], timeout: float = 10.0) -> logging.LogRecord:
        with self._arrived:
            found = self._arrived.wait_for(lambda: next((r for r in self.records if matches(r)), None), timeout)
        assert found is not None, f"no such record; got {[(r.name, r.getMessage()) for r in self.records]}"
        return found


@pytest.fixture
def capture() -> Iterator[Capture]:
    toolwire = logging.getLogger("toolwire")
    handler = Capture()
    toolwire.addHandler(handler)
    level = toolwire.level
    try:
        yield handler
    finally:
        toolwire.removeHandler(handler)
        toolwire.setLevel(level)
        _logs.follow_level()


def client_error(record: logging.LogRecord) -> bool:
    return record.name == ROUTER and "the client broke" in record.getMessage()


def test_an_engine_warning_arrives_on_a_toolwire_logger(capture: Capture, client_for) -> None:
    logging.getLogger("toolwire").setLevel(logging.INFO)
    client = client_for(Server("logs"))
    client.send(CLIENT_ERROR)
    record = capture.wait_for(client_error)
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "the client reported an error code=-32000 message=the client broke"
    assert record.threadName == "toolwire-logs"
    client.finish()


def test_debug_records_follow_the_toolwire_logger_level(capture: Capture, client_for) -> None:
    # At WARNING, the engine's debug record (sent first) never arrives: the warning after it does.
    logging.getLogger("toolwire").setLevel(logging.WARNING)
    client = client_for(Server("quiet"))
    client.send(BOGUS)
    client.send(CLIENT_ERROR)
    capture.wait_for(client_error)
    assert [r for r in capture.records if r.levelno < logging.WARNING] == []
    client.finish()

    # At DEBUG, set before the next server is made, it does, in order.
    capture.records.clear()
    logging.getLogger("toolwire").setLevel(logging.DEBUG)
    client = client_for(Server("chatty"))
    client.send(BOGUS)
    client.send(CLIENT_ERROR)
    capture.wait_for(client_error)
    ours = [r for r in capture.records if r.name == ROUTER]
    assert [(r.levelno, r.getMessage()) for r in ours] == [
        (logging.DEBUG, "ignored a notification method=notifications/bogus"),
        (logging.WARNING, "the client reported an error code=-32000 message=the client broke"),
    ]
    client.finish()


def test_targets_map_to_loggers_under_toolwire() -> None:
    assert _logs.logger_for("toolwire").name == "toolwire"
    assert _logs.logger_for("toolwire::transport::http").name == "toolwire.transport.http"
    assert _logs.logger_for("hyper::proto::h1").name == "toolwire.hyper.proto.h1"
    assert _logs.logger_for("toolwirex").name == "toolwire.toolwirex"


SCRIPT = (
    "import logging, sys\n"
    "from toolwire import Server\n"
    "logging.basicConfig(stream=sys.stderr, format='%(levelname)s %(name)s %(message)s')\n"
    "logging.getLogger('toolwire').setLevel(logging.DEBUG)\n"
    "Server('stdio-logs').run()\n"
)


@pytest.mark.parametrize("toolwire_log", [None, "debug"])
def test_stdio_logs_go_to_logging_and_stdout_holds_only_protocol(tmp_path, monkeypatch, toolwire_log) -> None:
    """The records an engine logs just before the process exits are logged at exit; with
    TOOLWIRE_LOG set, the engine's stderr output is there too."""
    if toolwire_log is None:
        monkeypatch.delenv("TOOLWIRE_LOG", raising=False)
    else:
        monkeypatch.setenv("TOOLWIRE_LOG", toolwire_log)
    script = tmp_path / "logs.py"
    script.write_text(SCRIPT)
    done, answers = serve_script(script, [INITIALIZE, BOGUS, CLIENT_ERROR])
    assert done.returncode == 0, done.stderr
    # serve_script parsed every stdout line as JSON: here, the one answer.
    assert [a.get("id") for a in answers] == [0]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    stderr = done.stderr.decode()
    assert f"DEBUG {ROUTER} ignored a notification method=notifications/bogus" in stderr
    assert f"WARNING {ROUTER} the client reported an error code=-32000 message=the client broke" in stderr
    engine_stderr = "WARN toolwire::dispatch::router: the client reported an error" in stderr
    assert engine_stderr == (toolwire_log is not None), stderr
