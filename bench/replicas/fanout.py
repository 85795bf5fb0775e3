"""Listen fan-out latency: the time from a resource update on one server to its
`notifications/resources/updated` on a `subscriptions/listen` stream, on the same server (in
memory) or on another replica sharing a Redis. One update at a time, each one waited for.

usage: fanout.py UPDATE_URL LISTEN_URL ROUNDS   (prints JSON: median and p99 in microseconds)
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time

import httpx2 as httpx

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
URI = "test://watched-resource"


def headers(method: str, name: str | None = None) -> dict[str, str]:
    sent = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        sent["Mcp-Name"] = name
    return sent


def main(update_url: str, listen_url: str, rounds: int) -> None:
    heard: list[float] = []
    got = threading.Condition()
    ready = threading.Event()

    def listen() -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": [URI]}, "_meta": META},
        }
        with (
            httpx.Client(timeout=None) as client,
            client.stream("POST", listen_url, json=body, headers=headers("subscriptions/listen")) as stream,
        ):
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("method") == "notifications/subscriptions/acknowledged":
                    ready.set()
                elif message.get("method") == "notifications/resources/updated":
                    with got:
                        heard.append(time.perf_counter())
                        got.notify()

    threading.Thread(target=listen, daemon=True).start()
    if not ready.wait(10):
        sys.exit("fanout: the listen stream was not acknowledged")
    latencies = []
    with httpx.Client(timeout=10) as client:
        for n in range(rounds):
            call = {
                "jsonrpc": "2.0",
                "id": n + 2,
                "method": "tools/call",
                "params": {"name": "test_update_resource", "arguments": {"uri": URI}, "_meta": META},
            }
            with got:
                before = len(heard)
            sent = time.perf_counter()
            answer = client.post(update_url, json=call, headers=headers("tools/call", "test_update_resource"))
            answer.raise_for_status()
            with got:
                if not got.wait_for(lambda seen=before: len(heard) > seen, timeout=10):
                    sys.exit(f"fanout: update {n} never reached the listener")
                latencies.append(heard[before] - sent)
    latencies.sort()
    print(
        json.dumps(
            {
                "rounds": rounds,
                "median_us": round(statistics.median(latencies) * 1e6),
                "p99_us": round(latencies[int(len(latencies) * 0.99) - 1] * 1e6),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
