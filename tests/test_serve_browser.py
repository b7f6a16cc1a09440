"""`copal serve` in a real browser: the command started as a user starts it, its printed URL for
ana opened in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright), the label
queue drawn by xterm.js in the page, a screenshot, the key `c` typed into the page, and ana's
label in the database. The page must load nothing from another host, hit no missing asset and
log no error.

Chromium comes from Debian's `chromium` package (CI installs it; Playwright's own browser
download is not used). Without it the tests skip on a developer's machine and fail under CI.

Waits are bounded polls (of the page, its websocket frames or a read-only connection to the
database), never fixed sleeps.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.test_serve_auth import free_port
from tests.test_serve_e2e import ana_labels  # one place knows how labels are stored

try:
    from playwright.sync_api import BrowserContext, Page, WebSocket, sync_playwright
except ImportError:  # the `test` extra installs it; missing() below reports its absence
    sync_playwright = None

CHROMIUM = Path("/usr/bin/chromium")
# Chromium as the machine notes start it: no sandbox (root), no GPU, and none of the background
# connections that a closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
DEADLINE_S = 120
WORLD = "harbor-clinics"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LOOPBACK = "127.0.0.1"


def missing() -> str | None:
    if sync_playwright is None:
        return "the playwright package is not installed (pip install '.[test]')"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(autouse=True)
def browser_available() -> None:
    why = missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the browser test cannot run: {why}")
    pytest.skip(why)


@pytest.fixture
def label_db(cli, initialised: Path, samples: Path) -> Path:
    """One world through the offline pipeline, a small selection: enough for a label queue."""
    steps = [
        ("import", str(samples / "harbor_clinics.yaml")),
        ("run", "ground", "compose", "generate", "select", "--world", WORLD,
         "--generator", "offline/heuristic", "--budget", "5"),
        ("run", "respond", "--world", WORLD, "--model", "offline/refuse-all"),
        ("run", "judge", "--world", WORLD, "--judge", "offline/judge"),
    ]
    for step in steps:
        result = cli(*step)
        assert result.exit_code == 0, (step, result.output)
    return initialised


class Served:
    """A running `copal serve` process: its printed URLs and its output so far."""

    def __init__(self, process: subprocess.Popen[bytes], out: Path, err: Path) -> None:
        self.process, self.out, self.err = process, out, err

    def output(self, tail: int = 3000) -> str:
        return (self.out.read_text(errors="replace")[-tail:] + "\n--- stderr ---\n"
                + self.err.read_text(errors="replace")[-tail:])

    def url_of(self, user: str) -> str | None:
        for line in self.out.read_text(errors="replace").splitlines():
            name, _, url = line.partition("\t")
            if name == user and url.startswith("http://"):
                return url
        return None


def until(what: str, ready: Callable[[], bool], end: float, *, alive: Served,
          pause: Callable[[], None], detail: Callable[[], str] = str) -> None:
    """Polls `ready` until it holds; fails on the deadline or if the server has exited."""
    while not ready():
        assert alive.process.poll() is None, f"copal serve exited: {alive.output()}"
        assert time.monotonic() < end, f"timed out waiting for {what}: {detail()}"
        pause()


def listening(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def copal_serve(db: Path, tmp_path: Path, end: float,
                *options: str) -> Iterator[tuple[Served, str]]:
    """`copal serve --mode label --annotator ana [options]` on a free loopback port; yields it
    and ana's URL once the port accepts connections. Stopped with SIGINT (its Ctrl+C), then
    killed."""
    port = free_port()
    out, err = tmp_path / "serve.out", tmp_path / "serve.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "copal_tui", "--db", str(db), "serve", "--mode", "label",
             "--annotator", "ana", "--port", str(port), *options],
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=tmp_path,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
    served = Served(process, out, err)
    try:
        until("the server", lambda: served.url_of("ana") is not None and listening(port), end,
              alive=served, pause=lambda: time.sleep(0.1), detail=served.output)
        url = served.url_of("ana")
        assert url is not None and urlsplit(url).hostname == LOOPBACK, served.output()
        yield served, url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: only what it started
            process.wait()


class Watched:
    """What the page did: every request and websocket URL, failures, errors, and the bytes its
    websocket received (the terminal output that xterm.js draws)."""

    def __init__(self, context: BrowserContext, page: Page) -> None:
        self.urls: list[str] = []
        self.problems: list[str] = []
        self.terminal = bytearray()
        context.on("request", lambda r: self.urls.append(r.url))
        context.on("requestfailed", lambda r: self.problems.append(
            f"failed: {r.url} ({r.failure})"))
        context.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"HTTP {r.status}: {r.url}"))
        page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("websocket", self._websocket)

    def _websocket(self, ws: WebSocket) -> None:
        self.urls.append(ws.url)
        ws.on("framereceived", lambda payload: isinstance(payload, bytes)
              and self.terminal.extend(payload))

    def outside(self) -> list[str]:
        """URLs that were not on the loopback server (a data: URL names no host)."""
        return [u for u in self.urls
                if not u.startswith("data:") and urlsplit(u).hostname != LOOPBACK]


@contextmanager
def chromium(tmp_path: Path) -> Iterator[tuple[BrowserContext, Page]]:
    """Headless Debian Chromium with a new empty profile, driven by Playwright."""
    assert sync_playwright is not None
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 800})
        try:
            context.set_default_timeout(30_000)
            yield context, (context.pages[0] if context.pages else context.new_page())
        finally:
            context.close()


# The text layer of xterm.js's canvas renderer: how many of its pixels are painted.
PAINTED_PIXELS = """() => {
  const layer = document.querySelector('.xterm-screen canvas.xterm-text-layer');
  const ctx = layer && layer.getContext('2d');
  if (!ctx) return -1;
  const data = ctx.getImageData(0, 0, layer.width, layer.height).data;
  let painted = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) painted++;
  return painted;
}"""


# The template's @font-face (the font textual-serve ships), loaded by the page.
FONT_LOADED = """() => [...document.fonts].some(
  f => f.family.replace(/["']/g, '') === 'Roboto Mono' && f.status === 'loaded')"""


def test_a_browser_labels_as_the_urls_annotator(label_db: Path, tmp_path: Path):
    db = label_db
    before = ana_labels(db)
    end = time.monotonic() + DEADLINE_S

    with copal_serve(db, tmp_path, end) as (served, url), chromium(tmp_path) as (context, page):
        watched = Watched(context, page)

        def pause() -> None:
            page.wait_for_timeout(100)  # lets Playwright deliver the page's events meanwhile

        def seen() -> str:
            return (watched.terminal.decode("utf-8", "replace")[-1500:]
                    + f"\nproblems: {watched.problems}\n{served.output()}")

        page.goto(url)
        # The token became a cookie and left the address bar.
        assert "token=" not in page.url and urlsplit(page.url).hostname == LOOPBACK

        until("the label queue in the page", lambda: b"label as ana" in watched.terminal
              and b"labelled" in watched.terminal, end, alive=served, pause=pause, detail=seen)
        # Drawn, not only received: the page's script revealed the terminal on its first bytes,
        # and xterm.js painted text on its canvas.
        until("the terminal drawn", lambda: page.evaluate(
            "document.body.classList.contains('-first-byte')")
            and page.evaluate(PAINTED_PIXELS) > 1000, end, alive=served, pause=pause,
            detail=lambda: f"painted={page.evaluate(PAINTED_PIXELS)} {seen()}")
        assert page.locator(".textual-terminal").is_visible()

        shot = tmp_path / "label-as-ana.png"
        page.screenshot(path=str(shot), animations="disabled")
        png = shot.read_bytes()
        assert png.startswith(PNG_SIGNATURE) and len(png) > 10_000
        assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) \
            == (1280, 800)  # the IHDR chunk: the whole viewport

        # Typed into the page: xterm.js's input textarea sends it as a ["stdin", "c"] frame.
        page.focus("textarea.xterm-helper-textarea")
        page.keyboard.press("c")  # "c": the response is correct, saved at once
        until("ana's label in the database", lambda: len(ana_labels(db)) > len(before), end,
              alive=served, pause=pause, detail=seen)

        font = [u for u in watched.urls if urlsplit(u).path.startswith("/static/fonts/")]
        sockets = [u for u in watched.urls if urlsplit(u).scheme == "ws"]
        assert font and sockets, watched.urls  # the font came from the server itself
        assert page.evaluate(FONT_LOADED)  # and the page uses it
        assert watched.outside() == [], watched.outside()
        assert watched.problems == [], watched.problems

    new = ana_labels(db)[len(before):]
    assert len(new) == 1 and new[0]["action"] == "label" and new[0]["error"] == 0


def test_an_app_that_cannot_start_ends_the_session_in_the_page(initialised: Path,
                                                               tmp_path: Path):
    """The app process ends before it draws anything (here: its database has gone): the page
    says "Session ended." instead of showing its splash screen for good."""
    end = time.monotonic() + DEADLINE_S
    with copal_serve(initialised, tmp_path, end) as (served, url), \
            chromium(tmp_path) as (context, page):
        watched = Watched(context, page)
        for path in initialised.parent.glob(initialised.name + "*"):
            path.rename(path.with_name("moved-" + path.name))

        page.goto(url)
        until("the session to end", lambda: page.evaluate(
            "document.body.classList.contains('-closed')"), end, alive=served,
            pause=lambda: page.wait_for_timeout(100), detail=served.output)
        assert page.get_by_text("Session ended.").is_visible()
        assert watched.outside() == [] and watched.problems == [], watched.problems
    assert "no database" in served.output(tail=10**6)  # the app's own reason, in the log
