"""Store benchmarks: label commit latency, 8 concurrent labelling processes, the store's
labelling capacity with 8, 16 and 32 writer processes, interchange rates, `copal report --json`
wall time and peak memory, and the import time of the metric libraries the report loads.

    python benchmarks/bench_store.py DB [--writers 8 16 32] [--per-process 100]

Each function returns a list of result rows {name, value, unit, target, ok, note}.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COPAL = [sys.executable, "-m", "copal_tui"]


def row(name: str, value: float, unit: str, target: str = "", ok: bool | None = None,
        note: str = "") -> dict[str, Any]:
    return {"name": name, "value": round(value, 3), "unit": unit, "target": target, "ok": ok,
            "note": note}


def _labeller(db_path: str, annotator: str, rids: list[str], n: int, barrier: Any,
              out: Any) -> None:
    """One annotator labelling through the label screens' own write (AnnotationQueue.submit),
    each label built from the stored contract first, as the screen builds it."""
    from copal_tui.services.annotation.queue import AnnotationQueue
    from copal_tui.services.annotation.suites import copal_label
    from store.db import connect

    db = connect(db_path)
    queue = AnnotationQueue(db, "copal", annotator)
    locked = 0
    barrier.wait()
    t = time.perf_counter()
    for i in range(n):
        rid = rids[i % len(rids)]
        try:
            queue.submit(rid, copal_label(db, rid, []))
        except Exception as exc:  # noqa: BLE001 - counted, the benchmark reports them
            if "locked" in str(exc):
                locked += 1
    out.put((annotator, n, locked, time.perf_counter() - t))


def labelling(db: Path, processes: int = 8, per_process: int = 200) -> list[dict[str, Any]]:
    """Label commit latency (one label built from the stored contract and committed through
    the label screens' own write, AnnotationQueue.submit), then `processes` processes labelling
    at once."""
    from copal_tui.services.annotation.queue import AnnotationQueue
    from copal_tui.services.annotation.suites import copal_label
    from store.db import connect

    conn = connect(db)
    rids = [r[0] for r in conn.execute("SELECT id FROM responses ORDER BY id LIMIT 500")]
    single = AnnotationQueue(conn, "copal", "bench-single")
    samples = []
    for i in range(100):
        rid = rids[i % len(rids)]
        t = time.perf_counter()
        single.submit(rid, copal_label(conn, rid, []))
        samples.append((time.perf_counter() - t) * 1000)
    before = conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_labeller, args=(str(db), f"bench-{p}", rids, per_process,
                                                 barrier, out)) for p in range(processes)]
    t = time.perf_counter()
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    wall = time.perf_counter() - t
    after = conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
    locked = sum(r[2] for r in results)
    lost = processes * per_process - (after - before)
    return [
        row("label commit latency (median)", statistics.median(samples), "ms"),
        row("label commit latency (p95)", sorted(samples)[94], "ms"),
        row(f"{processes} processes labelling", processes * per_process / wall, "labels/s"),
        row("'database is locked' errors", locked, "count", "0", locked == 0),
        row("lost labels", lost, "count", "0", lost == 0),
    ]


def _queue_writer(db_path: str, annotator: str, rids: list[str], barrier: Any,
                  out: Any) -> None:
    """One annotator labelling through the label screens' own write (AnnotationQueue.submit:
    the label and its lease renewal in one BEGIN IMMEDIATE transaction)."""
    from copal_tui.services.annotation.queue import AnnotationQueue
    from copal_tui.services.annotation.suites import copal_label
    from store.db import connect

    queue = AnnotationQueue(connect(db_path), "copal", annotator)
    # The screen builds the label from the contract it shows before it writes.
    labels = [copal_label(queue.db, rid, []) for rid in rids]
    locked, waits = 0, []
    barrier.wait()
    start = time.time()
    for rid, label in zip(rids, labels, strict=True):
        t = time.perf_counter()
        try:
            queue.submit(rid, label)
        except Exception as exc:  # noqa: BLE001 - counted: the benchmark reports them
            if "locked" not in str(exc):
                raise
            locked += 1
        waits.append(time.perf_counter() - t)
    out.put((annotator, locked, start, time.time(), waits))


def capacity(db: Path, writers: list[int], per_process: int = 100) -> list[dict[str, Any]]:
    """Labels per second the store sustains with W processes labelling at once (each on its own
    responses, as fast as it can), for each W side by side; lost labels (rows counted after)
    and "database is locked" errors that reached a writer (past the 30 s busy timeout: waits
    inside SQLite's busy handler are fine and show as commit latency) must both be 0."""
    import sqlite3

    conn = sqlite3.connect(db)
    rids = [r[0] for r in conn.execute("SELECT id FROM responses ORDER BY id LIMIT ?",
                                       (max(writers) * per_process,))]
    rows: list[dict[str, Any]] = []
    ctx = mp.get_context("spawn")
    for w in writers:
        tag = f"cap{w}-{time.time_ns()}"
        barrier, out = ctx.Barrier(w), ctx.Queue()
        procs = [ctx.Process(target=_queue_writer, args=(
            str(db), f"{tag}-{p}", [rids[(p * per_process + i) % len(rids)]
                                    for i in range(per_process)], barrier, out))
            for p in range(w)]
        for p in procs:
            p.start()
        results = [out.get(timeout=900) for _ in procs]
        for p in procs:
            p.join()
        wall = max(r[3] for r in results) - min(r[2] for r in results)
        stored = conn.execute("SELECT COUNT(*) FROM annotations WHERE annotator LIKE ? "
                              "AND action = 'label'", (f"{tag}-%",)).fetchone()[0]
        locked = sum(r[1] for r in results)
        lost = w * per_process - stored - locked
        waits = sorted(x for r in results for x in r[4])
        rate = w * per_process / wall
        rows.append(row(f"capacity, {w} writers", rate, "labels/s",
                        note=f"{w * per_process} labels in {wall:.1f} s; commit median "
                             f"{statistics.median(waits) * 1000:.0f} ms, p99 "
                             f"{waits[int(len(waits) * 0.99) - 1] * 1000:.0f} ms, max "
                             f"{waits[-1] * 1000:.0f} ms"))
        rows.append(row(f"capacity, {w} writers: lost labels", lost, "count", "0", lost == 0))
        rows.append(row(f"capacity, {w} writers: 'database is locked'", locked, "count", "0",
                        locked == 0))
    conn.close()
    return rows


def interchange(db: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "all.jsonl"
        t = time.perf_counter()
        subprocess.run([*COPAL, "--db", str(db), "export", "--out", str(out)], check=True,
                       capture_output=True)
        export_s = time.perf_counter() - t
        n = sum(1 for _ in out.open(encoding="utf-8"))
        fresh = Path(tmp) / "fresh.db"
        subprocess.run([*COPAL, "--db", str(fresh), "init"], check=True, capture_output=True)
        t = time.perf_counter()
        subprocess.run([*COPAL, "--db", str(fresh), "import", str(out)], check=True,
                       capture_output=True)
        import_s = time.perf_counter() - t
    return [row("export", n / export_s, "records/s", note=f"{n} records"),
            row("import", n / import_s, "records/s", note=f"{n} records")]


# The child reports its own high-water mark (VmHWM of its own address space) at exit. Neither
# RUSAGE_CHILDREN nor wait4's ru_maxrss will do: Linux carries the parent's peak into a child's
# maxrss across fork and exec, so every child would "peak" at this benchmark process's size.
_PEAK = ("import atexit, runpy, sys\n"
         "def peak():\n"
         "    for line in open('/proc/self/status'):\n"
         "        if line.startswith('VmHWM:'):\n"
         "            print('VmHWM', line.split()[1], file=sys.stderr)\n"
         "atexit.register(peak)\n"
         "sys.argv = ['copal', *sys.argv[1:]]\n"
         "runpy.run_module('copal_tui', run_name='__main__')\n")


# The metric libraries the report loads (scikit-learn, with the scipy it brings, and
# krippendorff), timed alone in a fresh interpreter: numpy first and apart, since the report
# loaded numpy before it used them.
_LIBRARIES = ("import time\n"
              "t0 = time.perf_counter()\n"
              "import numpy\n"
              "t1 = time.perf_counter()\n"
              "import sklearn.metrics, scipy.stats, krippendorff\n"
              "t2 = time.perf_counter()\n"
              "print(t2 - t1, t2 - t0)\n")
LIBRARIES_ROW = "import sklearn.metrics, scipy.stats, krippendorff"


def _library_import() -> tuple[float, float]:
    """Seconds to import the metric libraries after numpy, and with numpy."""
    out = subprocess.run([sys.executable, "-c", _LIBRARIES], capture_output=True, text=True,
                         check=True)
    libraries, with_numpy = (float(v) for v in out.stdout.split())
    return libraries, with_numpy


def report(db: Path, label: str, runs: int = 5,
           libraries: bool = False) -> list[dict[str, Any]]:
    """Wall time of `copal report --json` (the median of `runs` cold processes; the target is
    on the median), its CPU time (user + system, the median) and the peak memory of the
    largest of those processes. The CPU time is the figure to compare on a busy machine: the
    wall time there also counts the time the report waited for a core.

    With `libraries`, each report run is followed by a fresh interpreter that only imports the
    metric libraries; their import time (median) is a row of its own, and the target of a
    100k report is 1 s plus that time: the report pays it whole, whatever the store's size."""
    import resource

    walls, cpus = [], []
    imports: list[tuple[float, float]] = []
    peak = 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _PEAK, "--db", str(db), "report", "--json"],
                              capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Only the wait for this child lies between the two readings, so the difference is its
        # own CPU time (unlike ru_maxrss, which a child inherits: see _PEAK).
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode:
            raise RuntimeError(f"copal report failed: {done.stderr.strip()}")
        json.loads(done.stdout)
        kib = [int(line.split()[1]) for line in done.stderr.splitlines()
               if line.startswith("VmHWM ")]
        peak = max(peak, *kib)
        if libraries:
            imports.append(_library_import())
    median = statistics.median(walls)
    rows = []
    ok = None
    if imports:
        allowance = statistics.median(i[0] for i in imports)
        with_numpy = statistics.median(i[1] for i in imports)
        rows.append(row(LIBRARIES_ROW, allowance, "s",
                        note=f"fresh interpreter, after numpy (the report loads numpy first); "
                             f"{with_numpy:.2f} s with numpy; median of {runs}"))
        ok = median < 1.0 + allowance if "100k" in label else None
    rows.insert(0, row(f"report --json ({label})", median, "s", "< 1 s + import (100k)", ok,
                       note=f"median of {runs}, min {min(walls):.2f} s"))
    rows.insert(1, row(f"report --json CPU ({label})", statistics.median(cpus), "s",
                       note=f"user + system, median of {runs}"))
    rows.append(row(f"report peak memory ({label})", peak / 1024, "MiB"))
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path, help="a benchmark database (benchmarks/generate.py)")
    ap.add_argument("--writers", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--per-process", type=int, default=100)
    args = ap.parse_args(argv)
    for r in capacity(args.db, args.writers, args.per_process):
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<40} {r['value']:>10} {r['unit']:<9} {flag:<6} {r['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
