"""TUI benchmarks: start to the first painted screen, and keypress repaint latency in every list.

First paint is measured three ways, each against a minimal Textual app (a header, a 20-row
DataTable, a footer) measured in the same run, so the figure is a ratio that machine noise hits
alike:

- `pty`: as a new user starts it. `copal --db DB tui` runs in a pseudo-terminal (120x40, the
  ordinary command line, nothing patched); the clock stops when the first world's id reaches the
  terminal, i.e. the list's rows are painted. Best of `repeat`.
- `headless`: the same command line run headless, with a probe that exits once the worlds list
  shows rows (process start to first paint, shutdown not counted). Median.
- `Pilot`: in-process (imports already paid), from `run_test` to the rows on screen. Median.

Keypress latency: through the Pilot, the time from a key to the next refresh, against the same
key on a trivial app (the Pilot floor); the figure is the difference, a median. Each list row
says how many rows its page held, so a list that happens to be empty in the benchmark database
is visible as such rather than passing for free.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_store import row

# Each headless child prints the wall-clock time (time.time()) at which its first useful screen
# was painted; the parent subtracts the time it spawned the child. So the figure is process
# start to first paint, and neither app's shutdown is counted.
MINIMAL = """
import sys, time
from textual.app import App
from textual.widgets import DataTable, Footer, Header
HEADLESS = sys.argv[1:] == ["headless"]
class Minimal(App):
    def compose(self):
        yield Header(); t = DataTable(); yield t; yield Footer()
    def on_mount(self):
        t = self.query_one(DataTable); t.add_columns("a", "b")
        for i in range(20): t.add_row(f"minimal-row-{i}", str(i))
        if HEADLESS: self.call_after_refresh(self.painted)
    def painted(self):
        print(repr(time.time()), flush=True); self.exit()
Minimal().run(headless=HEADLESS)
"""
MINIMAL_MARK = b"minimal-row-0"

# `copal tui --db DB` through the real command line; the only changes are headless output and a
# watcher that notes when the worlds list first shows rows, then exits.
COPAL = """
import asyncio, sys, time
from copal_tui.cli import main
from copal_tui.tui import app as app_module
from copal_tui.tui.widgets.paged_table import PagedTable

run = app_module.CopalApp.run
def probe_run(self, *args, **kwargs):
    async def watch():
        while True:
            tables = list(self.screen.query(PagedTable)) if self.screen_stack else []
            if tables and tables[0].table.row_count:
                self.call_after_refresh(painted); return
            await asyncio.sleep(0.002)
    def painted():
        print(repr(time.time()), flush=True); self.exit()
    self.call_later(lambda: self.run_worker(watch()))
    return run(self, headless=True)
app_module.CopalApp.run = probe_run
main(["--db", sys.argv[1], "tui"], standalone_mode=False)
"""


def _env() -> dict[str, str]:
    # A user's install has compiled bytecode; a sandbox with PYTHONDONTWRITEBYTECODE set would
    # otherwise recompile copal's own modules on every start (the warm-up run writes them).
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _first_paint(code: str, *args: str) -> float:
    t = time.time()
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True,
                         text=True, timeout=300, env=_env())
    return float(out.stdout.strip().splitlines()[-1]) - t


def _pty_paint(argv: list[str], mark: bytes, timeout: float = 120.0) -> float:
    """Seconds from spawning `argv` in a 120x40 pseudo-terminal until `mark` is written to it."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**_env(), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        while mark not in seen:
            if time.perf_counter() - t > timeout:
                raise RuntimeError(f"{argv!r} painted no {mark!r} in {timeout} s: {seen[-300:]!r}")
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child exited and closed the terminal
                    chunk = b""
                if not chunk and proc.poll() is not None:
                    raise RuntimeError(f"{argv!r} exited before painting: {seen[-300:]!r}")
                # Keep a tail only: the mark is short, the stream is not.
                seen = seen[-4096:] + chunk
        return time.perf_counter() - t
    finally:
        proc.kill()  # only the child started here; its shutdown is not part of the figure
        proc.wait()
        os.close(master)


def _ratio_rows(kind: str, base: float, runs: dict[str, list[float]], pick: Callable[..., float],
                how: str, targets: dict[str, float]) -> list[dict[str, Any]]:
    rows = [row(f"minimal Textual app: first paint ({kind})", base, "s", note=how)]
    for label, samples in runs.items():
        t = pick(samples)
        target = targets.get(label, 1.5)
        rows.append(row(f"copal tui first paint ({kind}, {label})", t / base, "x minimal",
                        f"<= {target:g}x", t / base <= target, note=f"{t:.2f} s, {how}"))
    return rows


def cold_start(dbs: dict[str, Path], repeat: int = 5,
               targets: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """First paint of `copal tui` per database against the minimal app: in a pty (best of
    `repeat`) and headless (median of `repeat`), the two apps interleaved run by run."""
    targets = targets or {}
    copal = [sys.executable, "-m", "copal_tui"]
    minimal = [sys.executable, "-c", MINIMAL]
    # Warm-up runs: bytecode written, the database files in the page cache.
    _first_paint(MINIMAL, "headless")
    _pty_paint(minimal, MINIMAL_MARK)
    for db in dbs.values():
        _pty_paint([*copal, "--db", str(db), "tui"], b"bench-000")
    pty_base: list[float] = []
    head_base: list[float] = []
    pty_runs: dict[str, list[float]] = {label: [] for label in dbs}
    head_runs: dict[str, list[float]] = {label: [] for label in dbs}
    for _ in range(repeat):
        pty_base.append(_pty_paint(minimal, MINIMAL_MARK))
        head_base.append(_first_paint(MINIMAL, "headless"))
        for label, db in dbs.items():
            pty_runs[label].append(_pty_paint([*copal, "--db", str(db), "tui"], b"bench-000"))
            head_runs[label].append(_first_paint(COPAL, str(db)))
    return (_ratio_rows("pty", min(pty_base), pty_runs, min, f"best of {repeat}", targets)
            + _ratio_rows("headless", statistics.median(head_base), head_runs,
                          statistics.median, f"median of {repeat}", targets))


# ---------------------------------------------------------------------- in-process (Pilot)


async def _pilot_paint(app: Any, painted: Callable[[Any], bool]) -> float:
    t = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while not painted(app):
            await pilot.pause(0.002)
        # The refresh that puts the rows on screen, as the headless probe stops. Not
        # `pilot.pause()`: it waits for the whole process to go idle, so it also counted the
        # worker that fills in a list's slow columns after the paint (seconds at 1M).
        shown = asyncio.Event()
        app.call_after_refresh(shown.set)
        await shown.wait()
        return time.perf_counter() - t


def _worlds_painted(app: Any) -> bool:
    from copal_tui.tui.widgets.paged_table import PagedTable

    if not app.screen_stack:
        return False
    tables = list(app.screen.query(PagedTable))
    return bool(tables and tables[0].table.row_count)


def pilot_start(dbs: dict[str, Path], repeat: int = 5,
                targets: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """First paint through the Pilot, in this process: `make_app(db)` against the minimal app."""
    from textual.app import App
    from textual.widgets import DataTable, Footer, Header

    from copal_tui.tui.app import make_app

    class Minimal(App[None]):
        def compose(self):  # type: ignore[no-untyped-def,unused-ignore]
            yield Header()
            yield DataTable()
            yield Footer()

        def on_mount(self) -> None:
            t = self.query_one(DataTable)
            t.add_columns("a", "b")
            for i in range(20):
                t.add_row(f"minimal-row-{i}", str(i))

    def minimal_painted(app: Any) -> bool:
        return bool(app.is_running and app.query(DataTable) and app.query_one(DataTable).row_count)

    asyncio.run(_pilot_paint(Minimal(), minimal_painted))  # warm-up: imports, first layout
    base: list[float] = []
    runs: dict[str, list[float]] = {label: [] for label in dbs}
    for _ in range(repeat):
        base.append(asyncio.run(_pilot_paint(Minimal(), minimal_painted)))
        for label, db in dbs.items():
            runs[label].append(asyncio.run(_pilot_paint(make_app(db), _worlds_painted)))
    return _ratio_rows("Pilot", statistics.median(base), runs, statistics.median,
                       f"median of {repeat}", targets or {})


# ---------------------------------------------------------------------- keypresses

Setup = list[Any]  # key names (str) or callables taking the app, run in order before timing


def _focused_list(app: Any) -> tuple[int | None, str | None]:
    """Rows in the focused table and the id of the list (PagedTable) holding it."""
    from textual.widgets import DataTable

    focused = app.focused
    if not isinstance(focused, DataTable):
        return None, None
    return focused.row_count, getattr(focused.parent, "id", None)


async def _workers_done(app: Any, limit: float = 120.0) -> None:
    """Wait until the app's workers (a page, its slow columns, queue order) have finished:
    a key timed while one still runs would count its CPU, not the key's repaint."""
    end = time.monotonic() + limit
    while any(w.is_running for w in app.workers) and time.monotonic() < end:
        await asyncio.sleep(0.05)


async def _key_latency(app: Any, keys: list[str], setup: Setup,
                       warm: float = 1.0) -> tuple[float, int | None, str | None]:
    samples = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(warm)  # let first-open work (queue order, counts) finish
        for step in setup:
            if callable(step):
                step(app)
            else:
                await pilot.press(step)
            await pilot.pause(0.5)
        await pilot.pause(warm)  # the list's page and its slow columns have arrived
        await _workers_done(app)
        rows, list_id = _focused_list(app)
        if rows == 0:
            return 0.0, rows, list_id  # an empty list: nothing to time
        for k in keys:
            t = time.perf_counter()
            await pilot.press(k)
            await pilot.pause()
            samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples), rows, list_id


def _open(name: str, **kwargs: Any) -> Callable[[Any], None]:
    def step(app: Any) -> None:
        app.action_open(name, **kwargs)
    return step


def _floor() -> float:
    from textual.app import App
    from textual.widgets import DataTable

    class Trivial(App[None]):
        def compose(self):  # type: ignore[no-untyped-def,unused-ignore]
            yield DataTable()

        def on_mount(self) -> None:
            t = self.query_one(DataTable)
            t.add_columns("a")
            for i in range(100):
                t.add_row(str(i))

    ms, _, _ = asyncio.run(_key_latency(Trivial(), ["down", "up"] * 10, []))
    return ms


def keypress(db: Path, target_ms: float = 20.0) -> list[dict[str, Any]]:
    """Median key-to-repaint latency over the Pilot floor in each list and in the label queue."""
    from copal_tui.tui.app import make_app

    keys = ["down", "up"] * 10
    floors = [_floor()]
    # name -> (app options, setup, keys timed, the list that must have the keyboard)
    cases: dict[str, tuple[dict[str, Any], Setup, list[str], str | None]] = {
        "worlds list": ({}, ["down"] * 3, keys, "worlds-table"),
        "a world's items": ({}, ["enter", "4"], keys, "items-table"),
        "a world's runs": ({}, ["enter", "5"], keys, "runs-table"),
        "COMPASS queries": ({}, ["enter", "6"], keys, "compass-table"),
        "dialogues list": ({}, [_open("dialogues")], keys, "dialogues-table"),
        "cases": ({}, [_open("cases")], keys, "cases-table"),
        "label queue": ({"mode": "label", "annotator": "bench"}, [], ["1", "1"] * 10, None),
    }
    measured: dict[str, tuple[float, int | None, str | None]] = {}
    for name, (kw, setup, case_keys, _) in cases.items():
        label = name == "label queue"
        measured[name] = asyncio.run(_key_latency(make_app(db, **kw), case_keys, setup,
                                                  warm=10.0 if label else 2.0))
    floors.append(_floor())  # before and after: the machine's load drifts during the run
    floor = statistics.median(floors)
    rows = [row("Pilot floor (trivial app, down/up)", floor, "ms",
                note=" / ".join(f"{f:.1f}" for f in floors) + " ms before / after")]
    for name, (ms, n, list_id) in measured.items():
        want = cases[name][3]
        if want is not None and list_id != want:
            # The database has no such list (a world without a COMPASS suite): not judged.
            rows.append(row(f"keypress {name}", 0.0, "ms over floor", f"<= {target_ms:g} ms",
                            None, note="not in this database"))
            continue
        shown = "" if n is None else f", {n} rows on the page"
        ok = ms - floor <= target_ms if n != 0 else None
        rows.append(row(f"keypress {name}", ms - floor if n != 0 else 0.0, "ms over floor",
                        f"<= {target_ms:g} ms",
                        ok, note=f"{ms:.1f} ms{shown}" + (" (empty list: not judged)"
                                                          if n == 0 else "")))
    return rows
