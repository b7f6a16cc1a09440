"""TUI benchmarks: start to the first painted screen, and keypress repaint latency in every list.

First paint is measured three ways, each against a minimal Textual app (a header, a 20-row
DataTable, a footer) measured in the same run, so the figure is a ratio that machine noise hits
alike:

- `pty`: as a new user starts it. `copal --db DB tui` runs in a pseudo-terminal (120x40, the
  ordinary command line, nothing patched); the clock stops when the first world's id reaches the
  terminal, i.e. the list's rows are painted. Best of `repeat`. The child's CPU time (all its
  threads, from /proc) is read at that moment too: on a loaded machine the wall ratio swings
  with the load, the CPU to first paint much less.
- `headless`: the same command line run headless, with a probe that exits at the refresh that
  follows the worlds list's first rows (process start to first paint, shutdown not counted; the
  probe hooks the list rather than polling it, which would spend CPU of its own). Median.
- `Pilot`: in-process (imports already paid), from `run_test` to the rows on screen. Median.

Keypress latency is in `bench_tui_keys` (`keypress`, re-exported here).
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
from typing import Any, NamedTuple

from bench_store import row
from bench_tui_keys import keypress

# Each headless child prints the wall-clock time (time.time()) at which its first useful screen
# was painted, and its CPU time so far; the parent subtracts the time it spawned the child. So
# the figure is process start to first paint, and neither app's shutdown is counted.
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
        print(repr(time.time()), time.process_time(), flush=True); self.exit()
Minimal().run(headless=HEADLESS)
"""
MINIMAL_MARK = b"minimal-row-0"

# `copal tui --db DB` through the real command line; the only changes are headless output and a
# hook that notes the refresh after the worlds list first shows rows, then exits.
COPAL = """
import sys, time
from copal_tui.cli import main
from copal_tui.tui import app as app_module
from copal_tui.tui.widgets.paged_table import PagedTable

run = app_module.CopalApp.run
show = PagedTable._show
def probe_show(self, *args):
    show(self, *args)
    if self.table.row_count:
        self.app.call_after_refresh(painted, self.app)
done = []
def painted(app):
    if not done:  # the first refresh with rows only
        done.append(1)
        print(repr(time.time()), time.process_time(), flush=True); app.exit()
def probe_run(self, *args, **kwargs):
    return run(self, headless=True)
PagedTable._show = probe_show
app_module.CopalApp.run = probe_run
main(["--db", sys.argv[1], "tui"], standalone_mode=False)
"""


def _env() -> dict[str, str]:
    # A user's install has compiled bytecode; a sandbox with PYTHONDONTWRITEBYTECODE set would
    # otherwise recompile copal's own modules on every start (the warm-up run writes them).
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class Paint(NamedTuple):
    wall: float  # seconds from spawning the process to its first painted rows
    cpu: float  # CPU seconds the process had used by then (all its threads)
    peak_mib: float = 0.0  # its peak resident memory by then (pty runs only)


def _first_paint(code: str, *args: str) -> Paint:
    t = time.time()
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True,
                         text=True, timeout=300, env=_env())
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return Paint(float(wall) - t, float(cpu))


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system, every thread) a running process has used, from /proc."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        # The command name (field 2) may hold spaces: count the fields after its ")".
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# The longest `_pty_paint(settle=True)` waits after the paint for the process to go quiet.
SETTLE_MAX = 30.0


def _peak_of(pid: int) -> float:
    """Peak resident memory (VmHWM, MiB) of a running process, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def _pty_paint(argv: list[str], mark: bytes, timeout: float = 120.0,
               settle: bool = False) -> Paint:
    """From spawning `argv` in a 120x40 pseudo-terminal until `mark` is written to it: the
    seconds, and the CPU and peak memory the process had used at that moment. With `settle`,
    the memory is read once the process has then used no CPU for a second (its workers done),
    the terminal read meanwhile so that it never waits on a full one."""
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
        wall, cpu = time.perf_counter() - t, _cpu_of(proc.pid)
        idle_since, used = time.perf_counter(), cpu
        # A process that never goes quiet is read after SETTLE_MAX seconds instead.
        while settle and time.perf_counter() - idle_since < 1.0 and \
                time.perf_counter() - t < wall + SETTLE_MAX:
            if select.select([master], [], [], 0.1)[0]:
                os.read(master, 65536)
            now = _cpu_of(proc.pid)
            if now != used:
                idle_since, used = time.perf_counter(), now
        return Paint(wall, cpu, _peak_of(proc.pid))
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


def _cpu_rows(kind: str, base: list[Paint], runs: dict[str, list[Paint]]) -> list[dict[str, Any]]:
    """CPU to first paint (medians): the minimal app's, and each database's over it."""
    base_cpu = statistics.median(p.cpu for p in base)
    rows = [row(f"minimal Textual app: CPU to first paint ({kind})", base_cpu, "s",
                note=f"median of {len(base)}")]
    for label, samples in runs.items():
        cpu = statistics.median(p.cpu for p in samples)
        rows.append(row(f"copal tui CPU to first paint ({kind}, {label})", cpu - base_cpu,
                        "s over minimal", note=f"{cpu:.2f} s, median of {len(samples)}"))
    return rows


def _peak_rows(base: list[Paint], runs: dict[str, list[Paint]]) -> list[dict[str, Any]]:
    """Peak memory by the first paint in a pty (medians): the minimal app's and each
    database's. Lists read one page at a time, so it should not grow with the database."""
    rows = [row("minimal Textual app: peak memory at first paint (pty)",
                statistics.median(p.peak_mib for p in base), "MiB", note=f"median of {len(base)}")]
    for label, samples in runs.items():
        rows.append(row(f"copal tui peak memory at first paint (pty, {label})",
                        statistics.median(p.peak_mib for p in samples), "MiB",
                        note=f"VmHWM, median of {len(samples)}"))
    return rows


def cold_start(dbs: dict[str, Path], repeat: int = 5,
               targets: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """First paint of `copal tui` per database against the minimal app: in a pty (best of
    `repeat`) and headless (median of `repeat`), the two apps interleaved run by run; and the
    CPU each had used by its first paint (medians)."""
    targets = targets or {}
    copal = [sys.executable, "-m", "copal_tui"]
    minimal = [sys.executable, "-c", MINIMAL]
    # Warm-up runs: bytecode written, the database files in the page cache.
    _first_paint(MINIMAL, "headless")
    _pty_paint(minimal, MINIMAL_MARK)
    for db in dbs.values():
        _pty_paint([*copal, "--db", str(db), "tui"], b"bench-000")
    pty_base: list[Paint] = []
    head_base: list[Paint] = []
    pty_runs: dict[str, list[Paint]] = {label: [] for label in dbs}
    head_runs: dict[str, list[Paint]] = {label: [] for label in dbs}
    for _ in range(repeat):
        pty_base.append(_pty_paint(minimal, MINIMAL_MARK))
        head_base.append(_first_paint(MINIMAL, "headless"))
        for label, db in dbs.items():
            pty_runs[label].append(_pty_paint([*copal, "--db", str(db), "tui"], b"bench-000"))
            head_runs[label].append(_first_paint(COPAL, str(db)))

    def walls(runs: dict[str, list[Paint]]) -> dict[str, list[float]]:
        return {label: [p.wall for p in samples] for label, samples in runs.items()}

    return (_ratio_rows("pty", min(p.wall for p in pty_base), walls(pty_runs), min,
                        f"best of {repeat}", targets)
            + _cpu_rows("pty", pty_base, pty_runs) + _peak_rows(pty_base, pty_runs)
            + _ratio_rows("headless", statistics.median(p.wall for p in head_base),
                          walls(head_runs), statistics.median, f"median of {repeat}", targets)
            + _cpu_rows("headless", head_base, head_runs))


def memory(dbs: dict[str, Path]) -> list[dict[str, Any]]:
    """Peak memory of `copal tui` per database once its first screen has settled (rows
    painted, the worlds' statistics filled in by their worker): lists read a page at a time,
    so it should barely grow with the database."""
    return [row(f"copal tui peak memory, settled (pty, {label})",
                _pty_paint([sys.executable, "-m", "copal_tui", "--db", str(db), "tui"],
                           b"bench-000", settle=True).peak_mib, "MiB",
                note=f"VmHWM once it used no CPU for a second (at most {SETTLE_MAX:g} s)")
            for label, db in dbs.items()]


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
    from textual.widgets import DataTable

    from copal_tui.tui.widgets.paged_table import PagedTable

    if not app.screen_stack:
        return False
    tables = list(app.screen.query(PagedTable))
    # The list's own table is composed a moment after the list is in the DOM.
    rows = list(tables[0].query(DataTable)) if tables else []
    return bool(rows and rows[0].row_count)


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



__all__ = ["cold_start", "keypress", "memory", "pilot_start"]


def main(argv: list[str] | None = None) -> int:
    """`python benchmarks/bench_tui.py DB [DB ...]`: first paint of every database, then the
    keys in each, in one run (the databases are only read)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("dbs", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-keys", action="store_true", help="First paint only.")
    args = ap.parse_args(argv)
    dbs = {db.stem: db for db in args.dbs}
    rows = cold_start(dbs, repeat=args.repeat) + pilot_start(dbs, repeat=args.repeat)
    if not args.no_keys:
        for label, db in dbs.items():
            rows += keypress(db, label=label)
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>8} {r['unit']:<14} {r['target']:<10} "
              f"{flag:<6} {r['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
