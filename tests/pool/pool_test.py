"""toolwire past one machine: demo replicas behind nginx, sharing tasks, changes and requestState
keys through Redis. Started by tests/pool/run, which installs redis-server and nginx, builds the
Rust demo and runs this with the project's venv.

Every process (redis-server, the replicas, nginx) is this driver's own, on loopback ports it
picked; each scenario prints PASS, FAIL or SKIP, and the exit status is 1 on any FAIL.

Environment:
  POOL_LANGS           replicas' languages, in order (default rust,rust,rust; python and node
                       start through examples/run-demo)
  POOL_REDIS           1 (default): replicas get --redis and --request-state-key; 0: without them
                       (the scenarios that need shared state are skipped)
  POOL_LOAD_SECONDS    length of the load run (default 60)
  POOL_CLIENTS         concurrent clients in the load runs (default 200)
  POOL_LOAD_PROCS      processes the load clients are spread over (default 2)
  POOL_KILL_SECONDS    length of the load run during which a replica is killed (default 10)
  POOL_RUN_DIR         where logs and nginx's files go (default: a new temp dir)
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import re
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import httpx2 as httpx

ROOT = Path(__file__).resolve().parents[2]
RUN_DEMO = ROOT / "examples" / "run-demo"
RENDER_NGINX = ROOT / "deploy" / "render-nginx-conf"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
TASKS_EXT = "io.modelcontextprotocol/tasks"
UPSTREAM = "x-toolwire-upstream"
WATCHED = "test://watched-resource"
# What a client that can answer questions and run tasks declares on each request.
FULL_CAPS = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}, "extensions": {TASKS_EXT: {}}}

LANGS = [lang.strip() for lang in os.environ.get("POOL_LANGS", "rust,rust,rust").split(",") if lang.strip()]
SHARED = os.environ.get("POOL_REDIS", "1") != "0"
LOAD_SECONDS = float(os.environ.get("POOL_LOAD_SECONDS", "60"))
CLIENTS = int(os.environ.get("POOL_CLIENTS", "200"))
LOAD_PROCS = max(1, int(os.environ.get("POOL_LOAD_PROCS", "2")))
KILL_SECONDS = float(os.environ.get("POOL_KILL_SECONDS", "10"))
# The load processes running now (a signal ends them with the pool).
LOAD_WORKERS: list[multiprocessing.Process] = []
# The Redis task store's lease: a task whose replica died ends failed within it (plus a check).
TASK_LEASE_SECONDS = 5.0


class Failed(Exception):
    """A scenario's assertion that did not hold."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def free_port() -> int:
    """A loopback port nothing listens on now (the caller retries if another takes it first)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(what: str, deadline_s: float, probe: Callable[[], Any], alive: Callable[[], bool] = lambda: True) -> Any:
    """Polls `probe` until it returns something true, at most `deadline_s` (polling with a
    deadline, not synchronisation); gives up at once when `alive()` turns false."""
    end = time.monotonic() + deadline_s
    while True:
        value = probe()
        if value:
            return value
        if not alive():
            raise RuntimeError(f"{what}: the process exited")
        if time.monotonic() > end:
            raise RuntimeError(f"{what}: not within {deadline_s:.0f} s")
        time.sleep(0.05)


# --- the processes ---------------------------------------------------------------------------


@dataclass
class Replica:
    n: int  # its route in nginx: r<n>
    lang: str
    process: subprocess.Popen
    log: Path
    port: int = 0

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def name(self) -> str:
        return f"r{self.n} ({self.lang}, {self.addr})"


@dataclass
class Pool:
    run_dir: Path
    redis_url: str = ""
    key: str = ""
    replicas: list[Replica] = field(default_factory=list)
    processes: list[subprocess.Popen] = field(default_factory=list)
    nginx_port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}/mcp"

    def spawn(self, argv: list[str], log: Path) -> subprocess.Popen:
        with open(log, "wb") as out:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(process)
        # tests/pool/run ends these by pid if this driver is itself killed.
        with open(self.run_dir / "pids", "a") as pids:
            pids.write(f"{process.pid}\n")
        return process

    def start_redis(self) -> None:
        for _ in range(3):
            port = free_port()
            process = self.spawn(
                ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
                + ["--dir", str(self.run_dir)],
                self.run_dir / "redis.log",
            )
            try:
                wait_until("redis-server", 10, lambda port=port: redis_ping(port), lambda p=process: p.poll() is None)
            except RuntimeError:
                if process.poll() is None:
                    raise
                continue  # the port was taken in between: another one
            self.redis_url = f"redis://127.0.0.1:{port}/0"
            return
        raise RuntimeError(f"redis-server did not start: {(self.run_dir / 'redis.log').read_text()[-2000:]}")

    def start_replica(self, lang: str) -> Replica:
        n = len(self.replicas) + 1
        log = self.run_dir / f"replica-{n}-{lang}.log"
        flags = ["--conformance", "--http", "0"]
        if SHARED:
            flags += ["--redis", self.redis_url, "--request-state-key", self.key]
        if lang not in ("rust", "python", "node", "kotlin"):
            raise RuntimeError(f"POOL_LANGS: unknown language {lang!r}")
        # run-demo builds only what is missing or older than its sources, then execs the demo.
        argv = [str(RUN_DEMO), lang, *flags]
        process = self.spawn(argv, log)
        replica = Replica(n, lang, process, log)
        # The first start may build the demo or its binding.
        deadline = 900
        try:
            match = wait_until(
                f"replica {n} ({lang})",
                deadline,
                lambda: re.search(r"listening on http://([0-9.]+):(\d+)/mcp\s", log.read_text(errors="replace")),
                lambda: process.poll() is None,
            )
        except RuntimeError as err:
            raise RuntimeError(f"{err}; its log:\n{log.read_text(errors='replace')[-3000:]}") from None
        check(match.group(1) == "127.0.0.1", f"replica {n} listens on {match.group(1)}, not loopback")
        replica.port = int(match.group(2))
        self.replicas.append(replica)
        return replica

    def start_nginx(self) -> None:
        for _ in range(3):
            port = free_port()
            subprocess.run(
                [str(RENDER_NGINX), str(self.run_dir), str(port), *(str(r.port) for r in self.replicas)], check=True
            )
            process = self.spawn(
                ["nginx", "-p", str(self.run_dir), "-e", str(self.run_dir / "error.log")]
                + ["-c", str(self.run_dir / "nginx.conf")],
                self.run_dir / "nginx.out",
            )
            self.nginx_port = port
            try:
                wait_until("nginx", 10, self.answers_through_nginx, lambda p=process: p.poll() is None)
            except RuntimeError:
                if process.poll() is None:
                    raise
                continue
            return
        raise RuntimeError(f"nginx did not start: {(self.run_dir / 'error.log').read_text()[-2000:]}")

    def answers_through_nginx(self) -> bool:
        try:
            reply = httpx.post(self.url, json=modern("server/discover", {}), headers=headers_for("server/discover", {}))
        except httpx.TransportError:
            return False
        return reply.status_code == 200

    def replica_at(self, upstream: str) -> Optional[Replica]:
        """The replica that answered, from nginx's header (the last address it tried)."""
        last = upstream.split(",")[-1].strip()
        return next((r for r in self.replicas if r.addr == last), None)

    def kill(self, replica: Replica) -> None:
        replica.process.send_signal(signal.SIGKILL)
        replica.process.wait()

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # All reaped: tests/pool/run must not signal these pids, which may be reused now.
        (self.run_dir / "pids").unlink(missing_ok=True)


def redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


# --- the wire ----------------------------------------------------------------------------------

_ids = iter(range(1, 1 << 62))


def modern(method: str, params: dict, caps: Optional[dict] = None) -> dict:
    """A 2026-07-28 request: every one carries the version and the client's capabilities."""
    params = {**params, "_meta": {PV: MODERN, CC: FULL_CAPS if caps is None else caps}}
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def headers_for(method: str, params: dict) -> dict:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    name = params.get("name") or params.get("uri") or params.get("taskId")
    if name is not None:
        headers["Mcp-Name"] = str(name)
    return headers


def sse_events(text: str) -> list[tuple[Optional[str], dict]]:
    """The (event id, JSON-RPC message) pairs of an SSE body (priming events without data skipped)."""
    events, data, event_id = [], [], None
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line == "":
            if data and "".join(data).strip():
                events.append((event_id, json.loads("\n".join(data))))
            data, event_id = [], None
    return events


def sse_messages(text: str) -> list[dict]:
    """The JSON-RPC messages of an SSE body (keep-alive comments, ids and priming events skipped)."""
    return [message for _, message in sse_events(text)]


@dataclass
class Answer:
    status: int
    upstream: str
    messages: list[dict]

    @property
    def response(self) -> dict:
        finals = [m for m in self.messages if "id" in m and "method" not in m]
        check(len(finals) == 1, f"HTTP {self.status} from {self.upstream}: no single response in {self.messages}")
        return finals[0]

    @property
    def result(self) -> dict:
        response = self.response
        check("result" in response, f"an error from {self.upstream}: {response}")
        return response["result"]


async def post(client: httpx.AsyncClient, url: str, body: dict, extra: Optional[dict] = None) -> Answer:
    params = body.get("params", {})
    headers = {**headers_for(body["method"], params), **(extra or {})}
    reply = await client.post(url, content=json.dumps(body), headers=headers)
    kind = reply.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        messages = sse_messages(reply.text)
    elif reply.content:
        messages = [reply.json()]
    else:
        messages = []
    return Answer(reply.status_code, reply.headers.get(UPSTREAM, ""), messages)


def text_of(result: dict) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))


# --- the scenarios -------------------------------------------------------------------------------


class Scenarios:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.url = pool.url

    async def call(self, client: httpx.AsyncClient, method: str, params: dict, caps: Optional[dict] = None) -> Answer:
        return await post(client, self.url, modern(method, params, caps))

    def replica(self, answer: Answer) -> Replica:
        replica = self.pool.replica_at(answer.upstream)
        check(replica is not None, f"no replica named in {UPSTREAM}: {answer.upstream!r}")
        return replica

    async def elsewhere(self, client: httpx.AsyncClient, avoid: Replica) -> None:
        """Advances nginx's round robin so the next request goes to a replica other than `avoid`:
        probes until one lands on `avoid` (the turn then passes to the next)."""
        for _ in range(3 * len(self.pool.replicas)):
            probe = await self.call(client, "server/discover", {})
            if self.replica(probe) is avoid:
                return
        raise Failed(f"no probe reached {avoid.name} in {3 * len(self.pool.replicas)} tries")

    async def elsewhere_call(self, client: httpx.AsyncClient, avoid: Replica, method: str, params: dict) -> Answer:
        """`method` through nginx, answered by a replica other than `avoid` (asserted)."""
        await self.elsewhere(client, avoid)
        answer = await self.call(client, method, params)
        check(self.replica(answer) is not avoid, f"{method} went to {avoid.name} again")
        return answer

    async def tasks_across_replicas(self) -> str:
        async with httpx.AsyncClient(timeout=30) as client:
            created = await self.call(
                client, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "pool-a.txt"}}
            )
            task = created.result
            check(task.get("resultType") == "task", f"confirm_delete did not become a task: {task}")
            check(task["status"] == "input_required", f"a new confirm_delete task is {task['status']}")
            tid, origin = task["taskId"], self.replica(created)

            got = await self.elsewhere_call(client, origin, "tasks/get", {"taskId": tid})
            detail = got.result
            check(detail["status"] == "input_required", f"tasks/get on {self.replica(got).name}: {detail}")
            questions = detail.get("inputRequests") or {}
            check(len(questions) == 1, f"one question expected, got {questions}")
            ((key, question),) = questions.items()
            check(question["method"] == "elicitation/create", f"not an elicitation: {question}")

            answers = {key: {"action": "accept", "content": {"confirm": True}}}
            updated = await self.elsewhere_call(
                client, origin, "tasks/update", {"taskId": tid, "inputResponses": answers}
            )
            check(updated.result.get("resultType") == "complete", f"tasks/update: {updated.result}")

            end = time.monotonic() + 10
            while True:
                final = await self.elsewhere_call(client, origin, "tasks/get", {"taskId": tid})
                if final.result["status"] != "input_required" and final.result["status"] != "working":
                    break
                check(time.monotonic() < end, f"the answered task is still {final.result['status']} after 10 s")
                await asyncio.sleep(0.1)  # polling with a deadline
            check(final.result["status"] == "completed", f"the answered task ended {final.result}")
            check(text_of(final.result["result"]) == "Deleted pool-a.txt", f"its result: {final.result['result']}")

            slow = await self.call(
                client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 300, "label": "pool"}}
            )
            check(
                slow.result.get("resultType") == "task" and slow.result["status"] == "working",
                f"slow_compute: {slow.result}",
            )
            sid, runner = slow.result["taskId"], self.replica(slow)
            cancelled = await self.elsewhere_call(client, runner, "tasks/cancel", {"taskId": sid})
            check(cancelled.result.get("resultType") == "complete", f"tasks/cancel: {cancelled.result}")
            after = await self.elsewhere_call(client, runner, "tasks/get", {"taskId": sid})
            check(
                after.result["status"] == "cancelled",
                f"after tasks/cancel on {self.replica(cancelled).name}: {after.result}",
            )
        return (
            f"confirm_delete created on {origin.name}, read on {self.replica(got).name}, answered on "
            f"{self.replica(updated).name}, completed as read on {self.replica(final).name}; slow_compute "
            f"on {runner.name} cancelled on {self.replica(cancelled).name}"
        )

    async def updates_reach_every_replica(self) -> str:
        """Listen streams open on every replica; an update made on one reaches them all."""

        def body_for() -> dict:
            return modern("subscriptions/listen", {"notifications": {"resourceSubscriptions": [WATCHED]}})

        streams: list[tuple[Replica, asyncio.Queue]] = []
        async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as client, asyncio.TaskGroup() as group:
            tasks = []
            try:
                covered: set[int] = set()
                for _ in range(4 * len(self.pool.replicas)):
                    if len(covered) == len(self.pool.replicas):
                        break
                    inbox: asyncio.Queue = asyncio.Queue()
                    opened: asyncio.Future = asyncio.get_running_loop().create_future()
                    tasks.append(group.create_task(self.listen(client, body_for(), opened, inbox)))
                    replica = self.pool.replica_at(await asyncio.wait_for(opened, 10))
                    check(replica is not None, "a listen stream from no known replica")
                    ack = await asyncio.wait_for(inbox.get(), 10)
                    check(
                        ack.get("method") == "notifications/subscriptions/acknowledged", f"first on the stream: {ack}"
                    )
                    granted = ack["params"]["notifications"].get("resourceSubscriptions")
                    check(granted == [WATCHED], f"{replica.name} acknowledged {ack['params']}")
                    streams.append((replica, inbox))
                    covered.add(replica.n)
                check(
                    len(covered) == len(self.pool.replicas), f"listen streams reached only replicas {sorted(covered)}"
                )

                update = await self.call(
                    client, "tools/call", {"name": "test_update_resource", "arguments": {"uri": WATCHED}}
                )
                update.result  # noqa: B018 (asserts a result, not an error)
                source = self.replica(update)
                for replica, inbox in streams:
                    while True:
                        try:
                            note = await asyncio.wait_for(inbox.get(), 5)
                        except TimeoutError:
                            raise Failed(
                                f"the stream on {replica.name} heard nothing of the update on {source.name}"
                            ) from None
                        if note.get("method") == "notifications/resources/updated":
                            break
                    check(note["params"]["uri"] == WATCHED, f"{replica.name} heard {note}")
            finally:
                for task in tasks:
                    task.cancel()
        others = sorted({r.name for r, _ in streams if r is not source})
        check(bool(others) or len(self.pool.replicas) == 1, "no stream on a replica other than the update's")
        return f"updated on {source.name}; heard on {len(streams)} streams, on {', '.join(others)} among them"

    async def listen(self, client: httpx.AsyncClient, body: dict, opened: asyncio.Future, inbox: asyncio.Queue) -> None:
        headers = headers_for(body["method"], body["params"])
        async with client.stream("POST", self.url, content=json.dumps(body), headers=headers) as reply:
            if reply.status_code != 200:
                opened.set_exception(Failed(f"listen: HTTP {reply.status_code} {(await reply.aread())[:300]!r}"))
                return
            opened.set_result(reply.headers.get(UPSTREAM, ""))
            data: list[str] = []
            async for line in reply.aiter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif line == "" and data:
                    inbox.put_nowait(json.loads("\n".join(data)))
                    data = []

    async def mrtr_rounds_alternate(self) -> str:
        async with httpx.AsyncClient(timeout=30) as client:
            tool = "test_input_required_result_request_state"
            first = await self.call(client, "tools/call", {"name": tool, "arguments": {}})
            asked = first.result
            check(asked.get("resultType") == "input_required", f"{tool} round 1: {asked}")
            check("confirm" in asked.get("inputRequests", {}) and asked.get("requestState"), f"round 1: {asked}")
            x = self.replica(first)
            second = await self.elsewhere_call(
                client,
                x,
                "tools/call",
                {
                    "name": tool,
                    "arguments": {},
                    "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
                    "requestState": asked["requestState"],
                },
            )
            done = second.result
            check(done.get("resultType") == "complete" and text_of(done) == "state-ok: confirmed", f"round 2: {done}")
            y = self.replica(second)

            tool = "test_input_required_result_multi_round"
            rounds = [await self.call(client, "tools/call", {"name": tool, "arguments": {}})]
            answers = [
                ("step1", {"name": "Ada"}),
                ("step2", {"color": "green"}),
            ]
            for key, content in answers:
                asked = rounds[-1].result
                check(
                    asked.get("resultType") == "input_required" and key in asked.get("inputRequests", {}),
                    f"{key}: {asked}",
                )
                params = {
                    "name": tool,
                    "arguments": {},
                    "inputResponses": {key: {"action": "accept", "content": content}},
                    "requestState": asked["requestState"],
                }
                rounds.append(await self.elsewhere_call(client, self.replica(rounds[-1]), "tools/call", params))
            last = rounds[-1].result
            check(last.get("resultType") == "complete" and text_of(last) == "Ada likes green.", f"round 3: {last}")
        path = " -> ".join(self.replica(r).name for r in rounds)
        return f"request_state: round 1 on {x.name}, round 2 on {y.name}; multi_round: {path}"

    async def legacy_sessions_stick(self) -> str:
        sessions = 2 * len(self.pool.replicas)
        calls = 10
        homes = await asyncio.gather(*(self.legacy_session(i, calls) for i in range(sessions)))
        spread = Counter(r.n for r in homes)
        if len(self.pool.replicas) > 1:
            check(len(spread) > 1, f"every session opened on one replica: {spread}")
        # The official SDK client, in both eras, through nginx.
        from mcp import Client

        for mode in ("legacy", "auto"):
            async with Client(self.url, mode=mode) as sdk:
                expected = LEGACY if mode == "legacy" else MODERN
                check(sdk.protocol_version == expected, f"SDK {mode}: {sdk.protocol_version}")
                for i in range(5):
                    got = await sdk.call_tool("greet", {"name": f"sdk-{mode}-{i}"})
                    check(got.content[0].text == f"Hello, sdk-{mode}-{i}!", f"SDK {mode}: {got}")
        by_replica = ", ".join(f"r{n}: {count}" for n, count in sorted(spread.items()))
        return f"{sessions} sessions x {calls} calls, each on one replica ({by_replica}); the SDK client in both eras"

    async def legacy_send(self, client: httpx.AsyncClient, body: dict, session: Optional[str]) -> Answer:
        """A 2025-11-25 POST, in `session` if given; the answer's session id in `.session`."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if session:
            headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        reply = await client.post(self.url, content=json.dumps(body), headers=headers)
        kind = reply.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            messages = sse_messages(reply.text)
        else:
            messages = [reply.json()] if reply.content else []
        answer = Answer(reply.status_code, reply.headers.get(UPSTREAM, ""), messages)
        answer.session = reply.headers.get("mcp-session-id")  # type: ignore[attr-defined]
        return answer

    async def open_legacy(self, client: httpx.AsyncClient) -> tuple[str, Replica]:
        """initialize + initialized through nginx: the session id nginx gave, and its replica."""
        hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "pool-test", "version": "1"}}
        init = await self.legacy_send(
            client, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}, None
        )
        check(init.result["protocolVersion"] == LEGACY, f"initialize: {init.result}")
        session = init.session  # type: ignore[attr-defined]
        home = self.replica(init)
        check(bool(session) and session.startswith(f"r{home.n}."), f"session id {session!r} from {home.name}")
        ready = await self.legacy_send(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        check(ready.status == 202, f"notifications/initialized: HTTP {ready.status}")
        check(self.replica(ready) is home, f"initialized went to {ready.upstream}, not {home.name}")
        return session, home

    async def legacy_session(self, i: int, calls: int) -> Replica:
        async with httpx.AsyncClient(timeout=30) as client:
            session, home = await self.open_legacy(client)
            send = partial(self.legacy_send, client)
            for n in range(calls):
                name = f"legacy-{i}-{n}"
                body = {
                    "jsonrpc": "2.0",
                    "id": n + 1,
                    "method": "tools/call",
                    "params": {"name": "greet", "arguments": {"name": name}},
                }
                got = await send(body, session)
                check(self.replica(got) is home, f"call {n} of a session on {home.name} went to {got.upstream}")
                check(text_of(got.result) == f"Hello, {name}!", f"call {n}: {got.result}")
            gone = await client.delete(self.url, headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
            check(gone.status_code in (200, 202, 204), f"DELETE: HTTP {gone.status_code}")
            check(self.pool.replica_at(gone.headers.get(UPSTREAM, "")) is home, "DELETE went elsewhere")
        return home

    async def load(self, seconds: float, victim: Optional[Replica] = None) -> str:
        """CLIENTS clients calling `greet` through nginx for `seconds`, spread over LOAD_PROCS
        processes (one Python process tops out near 1,000 calls/s); with `victim`, that replica is
        killed -9 once it has answered 200 of them. Every answer is checked."""
        routes = [(r.n, r.addr) for r in self.pool.replicas]
        counts = multiprocessing.Array("q", len(routes) + 1)  # answers per replica, seen live
        results: multiprocessing.Queue = multiprocessing.Queue()
        share, extra = divmod(CLIENTS, LOAD_PROCS)
        workers, first = [], 0
        stop_at = time.monotonic() + seconds
        for w in range(LOAD_PROCS):
            clients = share + (1 if w < extra else 0)
            args = (self.url, routes, first, clients, stop_at, counts, results)
            workers.append(multiprocessing.Process(target=load_worker, args=args, daemon=True))
            first += clients
        LOAD_WORKERS[:] = workers
        killed_at = None
        pinned: Optional[str] = None
        streamed: list[tuple[Optional[str], dict]] = []
        # Opened before the load starts: nginx's turns are then ours alone, so the victim is
        # reached within one round (under load, other requests take turns at random).
        if victim is not None:
            pinned = await self.legacy_session_on(victim)
        began = time.monotonic()
        for worker in workers:
            worker.start()
        if victim is not None and pinned is not None:
            streamed = await self.legacy_progress_stream(pinned)
            await asyncio.to_thread(
                wait_until, f"200 answers from {victim.name}", seconds, lambda: counts[victim.n] >= 200
            )
            self.pool.kill(victim)
            killed_at = time.monotonic()
        stats = LoadStats()
        for _ in workers:
            part: LoadStats = await asyncio.to_thread(results.get, True, seconds + 60)
            stats.merge(part)
        for worker in workers:
            worker.join(10)
        elapsed = time.monotonic() - began
        rate = stats.ok / elapsed
        lat = sorted(stats.latencies)
        p50, p99 = (lat[len(lat) // 2], lat[int(len(lat) * 0.99)]) if lat else (0, 0)
        spread = ", ".join(f"r{n}: {count}" for n, count in sorted(stats.by_replica.items()))
        summary = (
            f"{stats.ok} calls in {elapsed:.1f} s = {rate:.0f} calls/s, "
            f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms; {spread}"
        )
        check(not stats.broken, f"a load worker broke: {stats.broken[:3]}")
        if victim is None:
            check(not stats.failed, f"{len(stats.failed)} calls failed, e.g. {stats.failed[:3]}; {summary}")
            check(stats.ok > 0, "no call answered")
            missing = [r.name for r in self.pool.replicas if stats.by_replica[r.n] == 0]
            check(not missing, f"no call reached {missing}; {summary}")
            return summary
        assert killed_at is not None
        late = [f for f in stats.failed if f[0] > killed_at]
        early = [f for f in stats.failed if f[0] <= killed_at]
        # In flight on the victim when it died: an error answer from nginx naming it.
        for _started, why, upstream in early:
            check(
                why.startswith("HTTP 502") and victim.addr in upstream, f"a call failed otherwise: {why} ({upstream})"
            )
        check(not late, f"{len(late)} calls started after the kill failed, e.g. {late[:3]}")
        served_after = stats.ok_after(killed_at)
        check(served_after > 0, "nothing answered after the kill")
        legacy = await self.legacy_after_kill(victim, pinned, streamed)
        return (
            f"killed {victim.name} mid-run: {len(early)} calls in flight on it answered 502, "
            f"{served_after} started after the kill all answered right; {legacy}; {summary}"
        )

    async def legacy_progress_stream(self, session: str) -> list[tuple[Optional[str], dict]]:
        """A call with progress in `session`, answered as an SSE stream: its (event id, message)s."""
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "pool"}},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": LEGACY,
        }
        async with httpx.AsyncClient(timeout=30) as client:
            reply = await client.post(self.url, content=json.dumps(body), headers=headers)
        check(reply.headers.get("content-type", "").startswith("text/event-stream"), f"not a stream: {reply.text}")
        events = sse_events(reply.text)
        check(len(events) == 4 and all(e[0] for e in events), f"3 progress and the answer, with ids: {events}")
        return events

    async def legacy_after_kill(
        self, victim: Replica, session: Optional[str], streamed: list[tuple[Optional[str], dict]]
    ) -> str:
        """A legacy session of the killed replica: with Redis, another replica takes it over and
        resumes its stream after Last-Event-ID; without, it is gone (404, the client re-initializes)."""
        assert session is not None
        greet = {"name": "greet", "arguments": {"name": "x"}}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": greet}
        async with httpx.AsyncClient(timeout=30) as client:
            if not SHARED:
                lost = await self.legacy_send(client, call, session)
                check(lost.status == 404, f"a session of the dead replica: HTTP {lost.status} {lost.messages}")
                return "its legacy session 404 (no shared store)"
            first_id = streamed[0][0]
            resumed = await client.get(
                self.url,
                headers={
                    "Accept": "text/event-stream",
                    "Mcp-Session-Id": session,
                    "MCP-Protocol-Version": LEGACY,
                    "Last-Event-ID": first_id or "",
                },
            )
            heir = self.pool.replica_at(resumed.headers.get(UPSTREAM, ""))
            check(resumed.status_code == 200, f"resume on another replica: HTTP {resumed.status_code} {resumed.text}")
            check(heir is not None and heir is not victim, f"resumed by {resumed.headers.get(UPSTREAM)}")
            replayed = [message for _, message in sse_events(resumed.text)]
            check(replayed == [message for _, message in streamed[1:]], f"replayed {replayed}, sent {streamed[1:]}")
            goes_on = await self.legacy_send(client, call, session)
            check(text_of(goes_on.result) == "Hello, x!", f"the session on {goes_on.upstream}: {goes_on.result}")
            check(self.replica(goes_on) is heir, f"the session went to {goes_on.upstream}, not its heir {heir}")
        return f"its legacy session went on on {heir.name}, its stream resumed after {first_id} (3 events replayed)"

    async def legacy_session_on(self, replica: Replica) -> str:
        """A legacy session opened through nginx that lives on `replica`."""
        async with httpx.AsyncClient(timeout=30) as client:
            for _ in range(10 * len(self.pool.replicas)):
                session, home = await self.open_legacy(client)
                if home is replica:
                    return session
                # Not wanted: ended, so the tries leave nothing behind.
                headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
                await client.delete(self.url, headers=headers)
        raise Failed(f"no session opened on {replica.name}")

    async def task_of_a_dead_replica_fails(self) -> str:
        async with httpx.AsyncClient(timeout=30) as client:
            slow = await self.call(
                client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 600, "label": "doomed"}}
            )
            check(
                slow.result.get("resultType") == "task" and slow.result["status"] == "working",
                f"slow_compute: {slow.result}",
            )
            tid, runner = slow.result["taskId"], self.replica(slow)
            self.pool.kill(runner)
            killed = time.monotonic()
            seen: set[str] = set()
            limit = TASK_LEASE_SECONDS + 4
            while True:
                got = await self.call(client, "tasks/get", {"taskId": tid})
                seen.add(self.replica(got).name)
                detail = got.result
                if detail["status"] != "working":
                    break
                check(
                    time.monotonic() - killed < limit,
                    f"the task of dead {runner.name} still working after {limit:.0f} s",
                )
                await asyncio.sleep(0.2)  # polling with a deadline
            took = time.monotonic() - killed
            check(detail["status"] == "failed", f"the task of dead {runner.name} ended {detail}")
            message = detail.get("statusMessage") or (detail.get("error") or {}).get("message", "")
            check("replica" in message, f"its message does not say why: {detail}")
        via = ", ".join(sorted(seen))
        return f"task on {runner.name} killed -9; read failed {took:.1f} s later via {via}: {message!r}"


@dataclass
class LoadStats:
    ok: int = 0
    # (started, why, upstream) of each call not answered right
    failed: list[tuple[float, str, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    # when each right answer's call started (to count those after a kill)
    ok_started: list[float] = field(default_factory=list)
    by_replica: Counter = field(default_factory=Counter)
    broken: list[str] = field(default_factory=list)

    def merge(self, other: LoadStats) -> None:
        self.ok += other.ok
        self.failed += other.failed
        self.latencies += other.latencies
        self.ok_started += other.ok_started
        self.by_replica.update(other.by_replica)
        self.broken += other.broken

    def ok_after(self, moment: float) -> int:
        return sum(1 for started in self.ok_started if started > moment)


def load_worker(url: str, routes: list, first: int, clients: int, stop_at: float, counts, results) -> None:
    """One load process: `clients` clients, each with its own connection, calling `greet` with a
    name of their own until `stop_at` (time.monotonic is one clock for all processes)."""
    # Forked: the parent's SIGTERM handler stops the pool, which is not this process's to stop.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    stats = LoadStats()
    by_addr = {addr: n for n, addr in routes}
    # One TLS context for all: building one per client costs 30 ms (plain HTTP never uses it).
    tls = ssl.create_default_context()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    async def client_loop(c: int) -> None:
        async with httpx.AsyncClient(timeout=30, limits=limits, verify=tls) as client:
            n = 0
            while time.monotonic() < stop_at:
                name = f"c{c}-{n}"
                n += 1
                body = modern("tools/call", {"name": "greet", "arguments": {"name": name}}, caps={})
                started = time.monotonic()
                try:
                    answer = await post(client, url, body)
                except httpx.HTTPError as err:
                    stats.failed.append((started, f"{type(err).__name__}: {err}", ""))
                    continue
                try:
                    check(answer.status == 200, f"HTTP {answer.status}")
                    result = answer.result
                    check(result.get("resultType") == "complete", f"resultType {result.get('resultType')}")
                    check(text_of(result) == f"Hello, {name}!", f"wrong answer {text_of(result)!r}")
                except Failed as err:
                    stats.failed.append((started, str(err), answer.upstream))
                    continue
                stats.latencies.append(time.monotonic() - started)
                stats.ok += 1
                stats.ok_started.append(started)
                replica = by_addr.get(answer.upstream.split(",")[-1].strip(), 0)
                stats.by_replica[replica] += 1
                with counts.get_lock():
                    counts[replica] += 1

    async def run() -> None:
        await asyncio.gather(*(client_loop(first + c) for c in range(clients)))

    try:
        asyncio.run(run())
    except Exception as err:  # reported to the parent, which fails the scenario
        stats.broken.append(f"{type(err).__name__}: {err}")
    results.put(stats)


# --- the run -------------------------------------------------------------------------------------


def main() -> int:
    run_dir = Path(
        os.environ.get("POOL_RUN_DIR")
        or subprocess.check_output(["mktemp", "-d", "/tmp/toolwire-pool.XXXXXX"], text=True).strip()
    )
    pool = Pool(run_dir, key=secrets.token_hex(32))
    results: list[tuple[str, str, str]] = []

    # SIGTERM (tests/pool/run's trap, on Ctrl-C): stop everything now, whatever the run waits on.
    def stop_now(signum: int, _frame: Any) -> None:
        for worker in LOAD_WORKERS:
            if worker.is_alive():
                worker.kill()
        pool.stop()
        print("pool: stopped by a signal", flush=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop_now)
    began = time.monotonic()
    try:
        if SHARED:
            pool.start_redis()
        for lang in LANGS:
            pool.start_replica(lang)
        pool.start_nginx()
        print(
            f"pool: {len(pool.replicas)} replicas ({', '.join(r.name for r in pool.replicas)}) behind {pool.url}"
            + (f", sharing {pool.redis_url}" if SHARED else ", no Redis (POOL_REDIS=0)"),
            flush=True,
        )
        scenarios = Scenarios(pool)
        plan: list[tuple[str, bool, Callable[[], Any]]] = [
            ("a. a task crosses replicas (get, update, cancel)", True, scenarios.tasks_across_replicas),
            (
                "b. a resource update reaches listen streams on every replica",
                True,
                scenarios.updates_reach_every_replica,
            ),
            ("c. MRTR rounds alternate replicas", True, scenarios.mrtr_rounds_alternate),
            ("d. legacy sessions stick to their replica", False, scenarios.legacy_sessions_stick),
            (f"e. load: {CLIENTS} clients for {LOAD_SECONDS:.0f} s", False, lambda: scenarios.load(LOAD_SECONDS)),
            (
                "f1. kill -9 a replica under load",
                False,
                lambda: scenarios.load(KILL_SECONDS, victim=pool.replicas[-1]),
            ),
            ("f2. a dead replica's task ends failed", True, scenarios.task_of_a_dead_replica_fails),
        ]
        for title, needs_redis, run in plan:
            if needs_redis and not SHARED:
                results.append(("SKIP", title, "needs the shared store (POOL_REDIS=1)"))
                print(f"SKIP {title}: needs the shared store (POOL_REDIS=1)", flush=True)
                continue
            started = time.monotonic()
            try:
                detail = asyncio.run(run())
                verdict = "PASS"
            except Failed as err:
                verdict, detail = "FAIL", str(err)
            except Exception as err:  # a scenario that broke is a failure too, with its reason
                verdict, detail = "FAIL", f"{type(err).__name__}: {err}"
            results.append((verdict, title, detail))
            print(f"{verdict} {title} ({time.monotonic() - started:.1f} s): {detail}", flush=True)
    except Exception as err:
        results.append(("FAIL", "pool start", f"{type(err).__name__}: {err}"))
        print(f"FAIL pool start: {err}", flush=True)
    finally:
        pool.stop()
    failed = [r for r in results if r[0] == "FAIL"]
    counts = Counter(r[0] for r in results)
    logs = f"; logs in {run_dir}" if failed else ""
    print(
        f"pool: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped in "
        f"{time.monotonic() - began:.0f} s{logs}",
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
