"""TUI keypress benchmark: repaint latency of a key in every list, against the Pilot floor.

Keypress latency: through the Pilot, the time from a key to the next refresh, against the same
key on a trivial app (the Pilot floor); the figure is the difference, a median. The Pilot's own
bookkeeping visits every widget of the screen twice per key, so the figure grows with the
screen's widget count; the note also gives the time from the key to the frame written (what a
user sees) and the CPU per key, each against the floor's. Each list row says how many rows its
page held, so a list that happens to be empty in the benchmark database is visible as such
rather than passing for free, and a list the setup did not reach (the keyboard elsewhere when
timing would begin) is reported as not reached, never timed in its place.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from bench_store import row


class Until(NamedTuple):
    """A setup step that waits (bounded) until `ready(app)` holds: a key pressed before the
    screen it is meant for has opened would go to the screen still showing."""

    ready: Callable[[Any], bool]
    limit: float = 60.0


Setup = list[Any]  # key names (str), callables taking the app, or Until; run in order


class Keys(NamedTuple):
    wall: float  # median ms from a key to the refresh after it (press + pause, the Pilot's)
    frame: float  # median ms from a key to the first frame written to the terminal
    cpu: float  # median CPU ms per key (the whole process)
    rows: int | None  # rows on the focused list's page
    list_id: str | None  # the list (PagedTable) that had the keyboard


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


async def _until(pilot: Any, ready: Callable[[], bool], limit: float) -> bool:
    end = time.monotonic() + limit
    while not ready():
        if time.monotonic() > end:
            return False
        await pilot.pause(0.05)
    return True


async def _key_latency(app: Any, keys: list[str], setup: Setup, want: str | None = None,
                       warm: float = 1.0) -> Keys:
    wall: list[float] = []
    frame: list[float] = []
    cpu: list[float] = []
    frames: list[float] = []
    display = app._display

    def noted(screen: Any, update: Any) -> None:
        # The frame a key produces reaches the terminal here (the headless driver's write).
        frames.append(time.perf_counter())
        display(screen, update)

    app._display = noted
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(warm)  # let first-open work (queue order, counts) finish
        for step in setup:
            if isinstance(step, Until):
                await _until(pilot, partial(step.ready, app), step.limit)
            elif callable(step):
                step(app)
            else:
                await pilot.press(step)
            await pilot.pause(0.5)
        await pilot.pause(warm)  # the list's page and its slow columns have arrived
        await _workers_done(app)
        if want is not None:
            # Bounded: a list that never gets the keyboard is reported, not timed.
            await _until(pilot, lambda: _focused_list(app)[1] == want, 30.0)
        rows, list_id = _focused_list(app)
        if rows == 0 or (want is not None and list_id != want):
            return Keys(0.0, 0.0, 0.0, rows, list_id)  # empty, or not reached: nothing to time
        for k in keys:
            frames.clear()
            t, c = time.perf_counter(), time.process_time()
            await pilot.press(k)
            await pilot.pause()
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            if frames:
                frame.append((frames[0] - t) * 1000)
    med = statistics.median
    return Keys(med(wall), med(frame) if frame else 0.0, med(cpu), rows, list_id)


def _open(name: str, **kwargs: Any) -> Callable[[Any], None]:
    def step(app: Any) -> None:
        app.action_open(name, **kwargs)
    return step


def _on_screen(name: str) -> Until:
    """Wait until the screen class `name` is showing and something in it has the keyboard."""
    return Until(lambda app: type(app.screen).__name__ == name and app.focused is not None)


def floor_app() -> Any:
    """The Pilot floor's app: a bare 100-row DataTable. Every key benchmark times its screens
    against this one app, so their figures over the floor compare."""
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

    return Trivial()


def _floor() -> Keys:
    return asyncio.run(_key_latency(floor_app(), ["down", "up"] * 10, []))


def keypress(db: Path, target_ms: float = 20.0, label: str = "") -> list[dict[str, Any]]:
    """Median key-to-repaint latency over the Pilot floor in each list and in the label queue
    (`label` names the database in the rows, when several are measured)."""
    from copal_tui.tui.app import make_app

    keys = ["down", "up"] * 10
    floors = [_floor()]
    world = [_on_screen("WorldsScreen"), "enter", _on_screen("WorldScreen")]
    # name -> (app options, setup, keys timed, the list that must have the keyboard)
    cases: dict[str, tuple[dict[str, Any], Setup, list[str], str | None]] = {
        "worlds list": ({}, [_on_screen("WorldsScreen"), "down", "down", "down"], keys,
                        "worlds-table"),
        "a world's items": ({}, [*world, "4"], keys, "items-table"),
        "a world's runs": ({}, [*world, "5"], keys, "runs-table"),
        "COMPASS queries": ({}, [*world, "6"], keys, "compass-table"),
        "dialogues list": ({}, [_on_screen("WorldsScreen"), _open("dialogues")], keys,
                           "dialogues-table"),
        "cases": ({}, [_on_screen("WorldsScreen"), _open("cases")], keys, "cases-table"),
        "label queue": ({"mode": "label", "annotator": "bench"}, [], ["1", "1"] * 10, None),
    }
    measured: dict[str, Keys] = {}
    for name, (kw, setup, case_keys, want) in cases.items():
        warm = 10.0 if name == "label queue" else 2.0
        measured[name] = asyncio.run(_key_latency(make_app(db, **kw), case_keys, setup, want,
                                                  warm=warm))
    floors.append(_floor())  # before and after: the machine's load drifts during the run
    med = statistics.median
    floor = Keys(med(f.wall for f in floors), med(f.frame for f in floors),
                 med(f.cpu for f in floors), None, None)
    at = f" ({label})" if label else ""
    rows = [row(f"Pilot floor (trivial app, down/up){at}", floor.wall, "ms",
                note=" / ".join(f"{f.wall:.1f}" for f in floors) + " ms before / after; "
                f"key to frame {floor.frame:.1f} ms, CPU {floor.cpu:.1f} ms per key")]
    for name, m in measured.items():
        want = cases[name][3]
        if want is not None and m.list_id != want:
            if name == "COMPASS queries" and m.list_id is not None:
                # The database has no such list (a world without a COMPASS suite): not judged.
                note = "not in this database"
            else:
                note = f"NOT REACHED: the keyboard was in {m.list_id or 'no list'}"
            rows.append(row(f"keypress {name}{at}", 0.0, "ms over floor", f"<= {target_ms:g} ms",
                            None, note=note))
            continue
        if m.rows == 0:
            rows.append(row(f"keypress {name}{at}", 0.0, "ms over floor", f"<= {target_ms:g} ms",
                            None, note="empty list: not judged"))
            continue
        shown = "" if m.rows is None else f", {m.rows} rows on the page"
        rows.append(row(f"keypress {name}{at}", m.wall - floor.wall, "ms over floor",
                        f"<= {target_ms:g} ms", m.wall - floor.wall <= target_ms,
                        note=f"{m.wall:.1f} ms{shown}; key to frame {m.frame:.1f} ms "
                        f"(+{m.frame - floor.frame:.1f}), CPU {m.cpu:.1f} ms per key "
                        f"(+{m.cpu - floor.cpu:.1f})"))
    return rows
