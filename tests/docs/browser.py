#!/usr/bin/env python3
"""tests/docs/browser.py SITE SCREENSHOTS: the built documentation site in a real browser.

Serves SITE (mkdocs' output) on 127.0.0.1, opens it in headless Chromium through the DevTools
protocol, and checks what a reader relies on: the home page and its navigation, the language
tabs of a guide (choosing Node shows Node's code, and the choice follows the reader to the next
guide), and search (a query shows results that match it). Each state is saved as a PNG in
SCREENSHOTS. Waits are for the page's own state, each bounded, never a fixed sleep.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

# The longest any one wait may take: the page loading, a tab switching, search answering.
WAIT_MS = 15_000


class Page:
    """One browser tab over the DevTools protocol: commands in order, events skipped."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.next_id = 0

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        # One deadline for the answer, however many events come first.
        deadline = time.monotonic() + WAIT_MS / 1000 + 5
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.0, deadline - time.monotonic())))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(result["exceptionDetails"].get("exception", {}).get("description", result))
        return result["result"].get("value")

    def wait_for(self, condition: str, what: str) -> Any:
        """Resolves with `condition`'s value once it is truthy, checked every 10 ms (a timer, which
        a headless page runs where it may skip animation frames)."""
        return self.evaluate(
            f"""new Promise((resolve, reject) => {{
                const deadline = performance.now() + {WAIT_MS}
                const check = () => {{
                    let value
                    try {{ value = ({condition}) }} catch (e) {{ value = undefined }}
                    if (value) return resolve(value)
                    if (performance.now() > deadline) return reject(new Error({json.dumps("timed out: " + what)}))
                    setTimeout(check, 10)
                }}
                check()
            }})"""
        )

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        loaded = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        # A wait begun in the page being left ends with it ("context destroyed"): wait again, in the
        # new one, until the deadline.
        deadline = time.monotonic() + WAIT_MS / 1000
        while True:
            try:
                self.wait_for(loaded, f"{url} loads")
                return
            except (AssertionError, RuntimeError):
                if time.monotonic() > deadline:
                    raise

    def screenshot(self, path: Path) -> None:
        # Once the page's transitions (a tab's indicator sliding over) have ended.
        self.wait_for("document.getAnimations().every(a => a.playState !== 'running')", "transitions end")
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


def serve(site: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_chromium(profile: str) -> tuple[subprocess.Popen[str], str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("tests/docs/browser.py: no chromium (deploy/ensure-packages chromium installs it)")
    browser = subprocess.Popen(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1280,900",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # It says where it listens, then goes on logging: read on a thread, so the wait has a deadline.
    lines: queue.Queue[str | None] = queue.Queue()

    def read(stream: Any) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, args=(browser.stderr,), daemon=True).start()
    deadline = time.monotonic() + WAIT_MS / 1000
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            raise SystemExit(f"tests/docs/browser.py: chromium ended (status {browser.wait()}) before it listened")
        if found := re.search(r"DevTools listening on (ws://\S+)", line):
            return browser, found[1]
    browser.kill()
    raise SystemExit("tests/docs/browser.py: chromium did not say where it listens in time")


def main(site: Path, screenshots: Path) -> None:
    screenshots.mkdir(parents=True, exist_ok=True)
    server = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as profile:
        browser, endpoint = start_chromium(profile)
        try:
            with contextlib.ExitStack() as sockets:
                check_site(sockets, endpoint, base, screenshots)
        finally:
            browser.terminate()
            try:
                browser.wait(timeout=10)
            except subprocess.TimeoutExpired:
                browser.kill()
                browser.wait()
            server.shutdown()
    print(f"docs screenshots: {', '.join(sorted(p.name for p in screenshots.glob('*.png')))} in {screenshots}")


def open_socket(sockets: contextlib.ExitStack, url: str) -> Any:
    return sockets.enter_context(connect(url, max_size=64 * 1024 * 1024, open_timeout=WAIT_MS / 1000))


def check_site(sockets: contextlib.ExitStack, endpoint: str, base: str, screenshots: Path) -> None:
    control = Page(open_socket(sockets, endpoint))
    target = control.send("Target.createTarget", url="about:blank")["targetId"]
    page = Page(open_socket(sockets, re.sub(r"/devtools/browser/.*", f"/devtools/page/{target}", endpoint)))
    page.send("Page.enable")
    page.send("Runtime.enable")

    # The home page: its title and the navigation to every language's start.
    page.open(base)
    assert page.evaluate("document.title").startswith("toolwire"), page.evaluate("document.title")
    nav = page.evaluate("[...document.querySelectorAll('.md-nav__link')].map(a => a.textContent.trim())")
    for entry in ("Getting started", "Guides", "Python", "Node", "Kotlin", "Swift", "Rust"):
        assert entry in nav, f"the navigation lacks {entry!r}: {nav}"
    page.screenshot(screenshots / "home.png")
    print("check: docs site in Chromium: the home page and its navigation")

    # A guide's language tabs: Python first; choosing Node shows Node's code.
    page.open(base + "guides/tools/")
    visible_code = """(() => {
        const set = document.querySelector('.tabbed-set')
        const shown = [...set.querySelectorAll('.tabbed-block')].filter(b => b.offsetParent !== null)
        return shown.length === 1 ? shown[0].textContent : null
    })()"""
    assert "from toolwire import" in page.wait_for(visible_code, "a tab shown"), "Python's tab is not first"
    page.evaluate(
        "[...document.querySelector('.tabbed-set').querySelectorAll('.tabbed-labels label')]"
        ".find(l => l.textContent.trim() === 'Node').click()"
    )
    page.wait_for(visible_code + ".includes(\"from 'toolwire'\")", "Node's tab shown after its label is clicked")
    page.screenshot(screenshots / "tools-node.png")
    # The choice follows the reader (content.tabs.link): the testing guide opens on Node.
    page.open(base + "guides/testing/")
    page.wait_for(visible_code + ".includes(\"from 'toolwire/testing'\")", "the testing guide opens on Node")
    page.screenshot(screenshots / "testing-node.png")
    print("check: docs site in Chromium: a guide's language tabs switch, and the choice follows to the next guide")

    # Search: a query shows results, each of which matches it.
    page.evaluate("document.querySelector('label[for=__search]').click()")
    page.wait_for("document.activeElement === document.querySelector('.md-search__input')", "the search box")
    page.send("Input.insertText", text="lifespan")
    page.evaluate("document.querySelector('.md-search__input').dispatchEvent(new KeyboardEvent('keyup'))")
    results = page.wait_for(
        "(() => { const r = [...document.querySelectorAll('.md-search-result__item')];"
        " return r.length ? r.map(i => i.textContent) : null })()",
        "search results for 'lifespan'",
    )
    assert all("lifespan" in text.lower() for text in results), results
    page.screenshot(screenshots / "search.png")
    print(f"check: docs site in Chromium: search for 'lifespan' shows {len(results)} matching results")

    # The API references: each link of the page opens a generated reference showing a name it
    # must hold (TypeDoc's front page lists the package's two modules).
    page.open(base + "reference/api-references/")
    links = dict(
        page.evaluate("[...document.querySelectorAll('article table a')].map(a => [a.textContent.trim(), a.href])")
    )
    expected = {
        "Python API": ("python", "Server"),
        "toolwire for Node": ("node", "toolwire/testing"),
        "the toolwire crate": ("rust", "Server"),
        "toolwire for Kotlin": ("kotlin", "dev.toolwire"),
    }
    assert set(expected) <= set(links), f"the API references page links {sorted(links)}"
    for name, (language, shown) in expected.items():
        page.open(links[name])
        page.wait_for(f"document.body && document.body.innerText.includes({shown!r})", f"{name} showing {shown}")
        page.screenshot(screenshots / f"api-{language}.png")
    print(f"check: docs site in Chromium: the API references open ({', '.join(expected)})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: tests/docs/browser.py SITE SCREENSHOTS")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
