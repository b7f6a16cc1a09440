"""TUI benchmarks: cold start to the first painted screen, and keypress repaint latency.

Cold start: a fresh process runs the app headless and exits after the first screen is painted
(its rows are on screen); compared with a minimal Textual app in the same run. Keypress
latency: through the Pilot, the time from a key to the next refresh, against the same key on a
trivial app (the Pilot floor); the figure is the difference.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_store import row

MINIMAL = """
from textual.app import App
from textual.widgets import DataTable, Footer, Header
class Minimal(App):
    def compose(self):
        yield Header(); t = DataTable(); yield t; yield Footer()
    def on_mount(self):
        t = self.query_one(DataTable); t.add_columns("a", "b")
        for i in range(20): t.add_row(str(i), str(i))
        self.call_after_refresh(self.exit)
Minimal().run(headless=True)
"""

COPAL = """
import sys
from pathlib import Path
from copal_tui.tui.app import make_app
from copal_tui.tui.widgets.paged_table import PagedTable
app = make_app(Path(sys.argv[1]))
async def first_rows():
    # Exit as soon as the first list shows rows (the first useful paint).
    import asyncio
    while True:
        tables = [t for t in app.screen.query(PagedTable)] if app.screen else []
        if tables and tables[0].table.row_count:
            app.exit(); return
        await asyncio.sleep(0.005)
app.call_later(lambda: app.run_worker(first_rows()))
app.run(headless=True)
"""


def _time(code: str, *args: str, repeat: int = 5) -> float:
    walls = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True,
                       timeout=120)
        walls.append(time.perf_counter() - t)
    return statistics.median(walls)


def cold_start(dbs: dict[str, Path], repeat: int = 5) -> list[dict[str, Any]]:
    base = _time(MINIMAL, repeat=repeat)
    rows = [row("minimal Textual app start", base, "s")]
    for label, db in dbs.items():
        t = _time(COPAL, str(db), repeat=repeat)
        ratio = t / base
        rows.append(row(f"copal tui start ({label})", ratio, "x minimal", "<= 2x",
                        ratio <= 2.0 if "100k" in label else None, note=f"{t:.2f} s"))
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
