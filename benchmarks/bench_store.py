"""Store benchmarks: label commit latency, 8 concurrent labelling processes, interchange rates,
`copal report --json` wall time and peak memory, and the import time of the metric libraries
the report loads.

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
    from copal_tui import labeling
    from store.db import connect

    db = connect(db_path)
    locked = 0
    barrier.wait()
    t = time.perf_counter()
    for i in range(n):
        try:
            labeling.submit(db, rids[i % len(rids)], annotator, [])
        except Exception as exc:  # noqa: BLE001 - counted, the benchmark reports them
            if "locked" in str(exc):
                locked += 1
    out.put((annotator, n, locked, time.perf_counter() - t))


def labelling(db: Path, processes: int = 8, per_process: int = 200) -> list[dict[str, Any]]:
    from copal_tui import labeling
    from store.db import connect

    conn = connect(db)
    rids = [r[0] for r in conn.execute("SELECT id FROM responses ORDER BY id LIMIT 500")]
    samples = []
    for i in range(100):
        t = time.perf_counter()
        labeling.submit(conn, rids[i % len(rids)], "bench-single", [])
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
    on the median) and the peak memory of the largest of those processes.

    With `libraries`, each report run is followed by a fresh interpreter that only imports the
    metric libraries; their import time (median) is a row of its own, and the target of a
    100k report is 1 s plus that time: the report pays it whole, whatever the store's size."""
    walls = []
    imports: list[tuple[float, float]] = []
    peak = 0
    for _ in range(runs):
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _PEAK, "--db", str(db), "report", "--json"],
                              capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
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
    rows.append(row(f"report peak memory ({label})", peak / 1024, "MiB"))
    return rows
