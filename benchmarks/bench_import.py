"""Import benchmarks: one world of N policies (with how long a writer waits meanwhile), and the
interchange import and export of a whole store at 10k, 100k (and 1M) responses.

    python benchmarks/bench_import.py [--sizes 3000 30000] [--responses 10000 100000] [--full]

For each size, a world is written as a YAML world file and as JSONL records (a world record and
N policy records); each is imported into a fresh database by `copal import` in a subprocess.
While it runs, this process plays a labeller: it takes the write lock (`BEGIN IMMEDIATE`, then
ROLLBACK) every few milliseconds and records the longest wait. The import is one transaction,
so that wait is roughly how long the import holds the lock.

Reported per format: seconds for the import call itself (parse, check, write; the subprocess's
interpreter start-up is left out so it does not flatter the ratio), the ratio of the largest to
the smallest size, and the longest writer wait. Linear import means the ratio stays near the
size ratio (target: within 15x for 10x the policies).

`interchange()` writes the benchmark's interchange file (benchmarks/generate.py's records: 5
models, 3 judges, a label per ten responses) at each size, imports it into a fresh database
and exports it again, each in a subprocess that times the call alone and reports its CPU time
and peak memory. Side by side in one run: seconds, microseconds per response and the ratio to
the next smaller size (linear: near the size ratio). Both stream, so peak memory stays
bounded: the export's flat, the import's by one chunk of records plus SQLite's bulk-load page
cache (`writes.BULK_CACHE_KIB`, 256 MiB at most). --full adds 1M responses (a 1.3 GB file;
minutes).

Beside each import, "SQLite alone": the rows that import wrote, read back into memory, written
again into a fresh store exactly as the import writes them (same connection, one transaction,
the same bulk-load settings, one executemany per table), with no line read, decoded or checked.
It is the part of the import's time that no change to its Python side can remove.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Runs in the subprocess: times the import call only, after the imports are loaded.
_RUNNER = """
import json, sys, time
from pathlib import Path
from copal_tui.interchange.importer import import_paths
from store.db import connect
db = connect(sys.argv[1])
t, cpu = time.perf_counter(), time.process_time()
counts = import_paths(db, [Path(sys.argv[2])])
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu,
                  "policies": counts["policy"]}))
"""


def row(name: str, value: float, unit: str, target: str = "", ok: bool | None = None,
        note: str = "") -> dict[str, Any]:
    return {"name": name, "value": round(value, 3), "unit": unit, "target": target, "ok": ok,
            "note": note}


def write_world(folder: Path, n: int, fmt: str) -> Path:
    """A world with `n` policies as `world.yaml` or `world.jsonl` in `folder`."""
    world = {"id": "bench-world", "name": "Bench World", "industry": "retail",
             "use_case": "customer support", "risk_tier": "low",
             "context": "A shop used to measure import speed."}
    policies = [{"id": f"P{i:06d}", "kind": ("allow", "deny", "procedure")[i % 3],
                 "text": f"Policy {i}: the assistant handles request type {i} as the shop's "
                         f"handbook section {i % 97} says."} for i in range(n)]
    if fmt == "yaml":
        lines = [f"{k}: {json.dumps(v)}" for k, v in world.items()] + ["policies:"]
        for p in policies:
            lines += [f"  - id: {p['id']}", f"    kind: {p['kind']}",
                      f"    text: {json.dumps(p['text'])}"]
        path = folder / "world.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path
    path = folder / "world.jsonl"
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "world", **world}) + "\n")
        for p in policies:
            f.write(json.dumps({"type": "policy", "world_id": world["id"], **p}) + "\n")
    return path


def _probe(db: Path, stop: threading.Event, worst: list[float]) -> None:
    # copal's own busy timeout (30 s): a wait that long fails, as a labeller's commit would.
    conn = sqlite3.connect(str(db), timeout=30, isolation_level=None)
    try:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
            except sqlite3.OperationalError:  # "database is locked": the wait timed out
                pass
            worst[0] = max(worst[0], time.perf_counter() - t)
            stop.wait(0.005)
    finally:
        conn.close()


def import_once(source: Path, db: Path) -> tuple[float, float, float]:
    """(import seconds, its CPU seconds, longest writer wait) for one import into a fresh db."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(db), "init"], check=True,
                   capture_output=True, cwd=ROOT)
    stop, worst = threading.Event(), [0.0]
    prober = threading.Thread(target=_probe, args=(db, stop, worst))
    prober.start()
    try:
        out = subprocess.run([sys.executable, "-c", _RUNNER, str(db), str(source)], check=True,
                             capture_output=True, text=True, cwd=ROOT)
    finally:
        stop.set()
        prober.join()
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return float(result["seconds"]), float(result["cpu"]), worst[0]


def policies(sizes: list[int], repeat: int = 3) -> list[dict[str, Any]]:
    """Result rows for every format and size, then the ratio of the largest to the smallest.

    Each import runs `repeat` times and the fastest counts (on a shared machine the slower runs
    measure the neighbours); the writer wait is the longest of all runs.
    """
    rows: list[dict[str, Any]] = []
    small, big = min(sizes), max(sizes)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for fmt in ("yaml", "jsonl"):
            times: dict[int, tuple[float, float]] = {}
            for n in sizes:
                folder = t / f"{fmt}-{n}"
                folder.mkdir()
                source = write_world(folder, n, fmt)
                runs = [import_once(source, folder / "copal.db") for _ in range(repeat)]
                seconds, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
                wait = max(r[2] for r in runs)
                times[n] = seconds, cpu
                label = f"{n / 1000:g}k"
                rows.append(row(f"import {fmt} {label} policies", seconds, "s",
                                note=f"{n / seconds:,.0f} policies/s; {cpu:.3f} s CPU"))
                rows.append(row(f"writer wait, {fmt} {label} import", wait, "s", "< 3 s",
                                wait < 3.0, "longest BEGIN IMMEDIATE wait meanwhile (30 s: "
                                            "timed out)"))
            ratio = times[big][0] / times[small][0]
            cpu_ratio = times[big][1] / times[small][1]
            rows.append(row(f"import {fmt} {big // small}x policies", ratio, "x time",
                            f"< {1.5 * big / small:g}x", ratio < 1.5 * big / small,
                            f"{big:,} vs {small:,} policies; CPU time {cpu_ratio:.1f}x"))
    return rows


# Runs in the subprocess: imports or exports, timing the call alone; reports its peak memory.
_INTERCHANGE = """
import json, sys, time
from pathlib import Path
from store.db import connect
verb, db_path, file = sys.argv[1:4]
db = connect(db_path)
if verb == "import":
    from copal_tui.interchange.importer import import_paths as run
    args = ([Path(file)],)
else:
    from copal_tui.interchange.exporter import export_jsonl as run
    args = (Path(file),)
t, cpu = time.perf_counter(), time.process_time()
counts = run(db, *args)
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "cpu": cpu, "records": sum(counts.values()),
                  "peak_mib": peak / 1024}))
"""


# Runs in the subprocess: the import's SQLite part alone. Every row an import wrote into the
# store at argv[1] is read back into memory (untimed); then, into the fresh empty store at
# argv[2], the same rows are written as the import writes them (its connection settings, one
# `write` transaction, `writes.bulk_load`, one executemany per table in referent order), timed
# from BEGIN to after COMMIT. No line is read, decoded or checked: what no change to the
# import's Python side can take away. With argv[3] "bare", the fresh store first loses every
# secondary index and its foreign-key checks: what would be left with a schema keyed as now
# but indexed for nothing.
_FLOOR = """
import json, sqlite3, sys, time
from store.artifacts import writes
from store.db import connect, write
TABLES = ("worlds", "policies", "clauses", "compositions", "items", "responses", "judgments",
          "annotations")
src = sqlite3.connect(sys.argv[1])
rows = {}
for t in TABLES:
    cols = [r[1] for r in src.execute(f"PRAGMA table_info({t})")]
    rows[t] = (cols, src.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY rowid").fetchall())
src.close()
db = connect(sys.argv[2])
if sys.argv[3] == "bare":
    db.execute("PRAGMA foreign_keys = OFF")
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS "
                              "NOT NULL").fetchall():
        db.execute(f'DROP INDEX "{name}"')
t, cpu = time.perf_counter(), time.process_time()
with write(db), writes.bulk_load(db, {name: len(r) for name, (_, r) in rows.items()}):
    for name, (cols, got) in rows.items():
        db.conn.executemany(f"INSERT INTO {name} ({', '.join(cols)}) VALUES "
                            f"({', '.join('?' * len(cols))})", got)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu,
                  "records": sum(len(r) for _, r in rows.values())}))
"""


# The two "SQLite alone" rows: the store's schema, and the same tables with no secondary index
# and no foreign-key check.
FLOORS = {"schema": "", "bare": ", no index or FK"}


def _floor_call(imported: Path, empty: Path, variant: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _FLOOR, str(imported), str(empty), variant],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return {k: float(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def _interchange_call(verb: str, db: Path, file: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _INTERCHANGE, verb, str(db), str(file)],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return {k: float(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def _fresh_store(db: Path) -> Path:
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(db), "init"], check=True,
                   capture_output=True, cwd=ROOT)
    return db


def write_interchange(path: Path, responses: int) -> int:
    """The benchmark store's interchange file at `responses` responses; returns its records."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from generate import records

    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for rec in records(responses, 5, 3, responses // 10, 3, 7):
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
            n += 1
    return n


def interchange(sizes: list[int], repeat: int = 1) -> list[dict[str, Any]]:
    """Import and export of the benchmark store at each size (fastest of `repeat` runs)."""
    rows: list[dict[str, Any]] = []
    done: dict[str, dict[int, tuple[float, float]]] = {"import": {}, "export": {}}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for n in sorted(sizes):
            source, db, out = t / f"in-{n}.jsonl", t / f"{n}.db", t / f"out-{n}.jsonl"
            records = write_interchange(source, n)
            label = f"{n / 1000:g}k responses" if n < 1_000_000 else f"{n / 1e6:g}M responses"
            best: dict[str, dict[str, float]] = {}
            for _ in range(repeat):
                out.unlink(missing_ok=True)
                _fresh_store(db)
                for verb, file in (("import", source), ("export", out)):
                    got = _interchange_call(verb, db, file)
                    if verb not in best or got["seconds"] < best[verb]["seconds"]:
                        best[verb] = got
                for variant in ("schema", "bare"):
                    got = _floor_call(db, _fresh_store(t / f"{n}-floor.db"), variant)
                    if variant not in best or got["seconds"] < best[variant]["seconds"]:
                        best[variant] = got
            source.unlink()
            out.unlink(missing_ok=True)
            for verb in ("import", "export"):
                r = best[verb]
                # The import target is for the benchmark's 100k-response store.
                goal = (verb, n) == ("import", 100_000)
                rows.append(row(f"interchange {verb} {label}", r["seconds"], "s",
                                "<= 5 s" if goal else "", r["seconds"] <= 5.0 if goal else None,
                                note=f"{r['seconds'] / n * 1e6:.0f} us/response; "
                                     f"{r['cpu']:.2f} s CPU; {records:,} records; peak "
                                     f"{r['peak_mib']:.0f} MiB"))
                if verb == "import":
                    for variant, what in FLOORS.items():
                        f = best[variant]
                        rows.append(row(f"interchange import {label}, SQLite alone{what}",
                                        f["seconds"], "s",
                                        note=f"{f['seconds'] / r['seconds']:.0%} of the import; "
                                             f"{f['cpu']:.2f} s CPU; its rows, in memory, "
                                             "written as it writes them"))
                smaller = [m for m in done[verb] if m < n]
                if smaller:
                    m = max(smaller)
                    ratio = r["seconds"] / done[verb][m][0]
                    cpu_ratio = r["cpu"] / done[verb][m][1]
                    rows.append(row(f"interchange {verb} {n // m}x responses", ratio, "x time",
                                    f"< {1.5 * n / m:g}x", ratio < 1.5 * n / m,
                                    f"{n:,} vs {m:,} responses; CPU time {cpu_ratio:.1f}x"))
                done[verb][n] = r["seconds"], r["cpu"]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3_000, 30_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--responses", type=int, nargs="+", default=[10_000, 100_000],
                    help="interchange sizes (responses); 0 skips the interchange benchmark")
    ap.add_argument("--full", action="store_true", help="also 1M responses (minutes, 1.3 GB)")
    ap.add_argument("--skip-policies", action="store_true")
    args = ap.parse_args(argv)
    rows = [] if args.skip_policies else policies(args.sizes, args.repeat)
    sizes = [n for n in args.responses if n > 0] + ([1_000_000] if args.full else [])
    if sizes:
        rows += interchange(sizes, 1 if args.full else min(args.repeat, 2))
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>10} {r['unit']:<7} {r['target']:<8} "
              f"{flag:<6} {r['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
