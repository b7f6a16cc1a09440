"""TUI benchmarks: cold start to the first painted screen, and keypress repaint latency.

Cold start: a fresh process runs the app headless and exits after the first screen is painted
(its rows are on screen); compared with a minimal Textual app in the same run. Keypress
latency: through the Pilot, the time from a key to the next refresh, against the same key on a
trivial app (the Pilot floor); the figure is the difference.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_store import row

# Each child prints the wall-clock time (time.time()) at which its first useful screen was
# painted; the parent subtracts the time it spawned the child. So the figure is process start to
# first paint, and neither app's shutdown is counted.
MINIMAL = """
import time
from textual.app import App
from textual.widgets import DataTable, Footer, Header
class Minimal(App):
    def compose(self):
        yield Header(); t = DataTable(); yield t; yield Footer()
    def on_mount(self):
        t = self.query_one(DataTable); t.add_columns("a", "b")
        for i in range(20): t.add_row(str(i), str(i))
        self.call_after_refresh(self.painted)
    def painted(self):
        print(repr(time.time()), flush=True); self.exit()
Minimal().run(headless=True)
"""

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
                         text=True, timeout=120, env=_env())
    return float(out.stdout.strip().splitlines()[-1]) - t


def cold_start(dbs: dict[str, Path], repeat: int = 5) -> list[dict[str, Any]]:
    _first_paint(MINIMAL)  # warm-up runs: bytecode written, files in the page cache
    for db in dbs.values():
        _first_paint(COPAL, str(db))
    # Interleave the apps so that machine noise hits both alike.
    base_runs: list[float] = []
    copal_runs: dict[str, list[float]] = {label: [] for label in dbs}
    for _ in range(repeat):
        base_runs.append(_first_paint(MINIMAL))
        for label, db in dbs.items():
            copal_runs[label].append(_first_paint(COPAL, str(db)))
    base = statistics.median(base_runs)
    rows = [row("minimal Textual app: start to first paint", base, "s")]
    for label, runs in copal_runs.items():
        t = statistics.median(runs)
        rows.append(row(f"copal tui start ({label})", t / base, "x minimal", "<= 2x",
                        t / base <= 2.0, note=f"{t:.2f} s"))
    return rows


async def _key_latency(app: Any, keys: list[str], setup: list[str], warm: float = 1.0) -> float:
    samples = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(warm)  # let first-open work (queue order, counts) finish
        for k in setup:
            await pilot.press(k)
            await pilot.pause(0.5)
        for k in keys:
            t = time.perf_counter()
            await pilot.press(k)
            await pilot.pause()
            samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def keypress(db: Path) -> list[dict[str, Any]]:
    import asyncio

    from textual.app import App
    from textual.widgets import DataTable

    from copal_tui.tui.app import make_app

    class Trivial(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield DataTable()

        def on_mount(self) -> None:
            t = self.query_one(DataTable)
            t.add_columns("a")
            for i in range(100):
                t.add_row(str(i))

    keys = ["down", "up"] * 10
    floor = asyncio.run(_key_latency(Trivial(), keys, []))
    rows = [row("Pilot floor (trivial app, down/up)", floor, "ms")]
    cases = {
        "worlds list": (dict(), ["down"] * 3),
        "items list": (dict(), ["enter", "4"]),
        "label queue": (dict(mode="label", annotator="bench"), []),
    }
    for name, (kw, setup) in cases.items():
        label = name == "label queue"
        ms = asyncio.run(_key_latency(make_app(db, **kw), ["1", "1"] * 10 if label else keys,
                                      setup, warm=10.0 if label else 1.0))
        rows.append(row(f"keypress {name}", ms - floor, "ms over floor", "<= 50 ms",
                        ms - floor <= 50, note=f"{ms:.1f} ms"))
    return rows
