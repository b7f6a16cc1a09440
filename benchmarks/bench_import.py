"""Policy import: time to import one world of N policies, and how long a writer waits meanwhile.

    python benchmarks/bench_import.py [--sizes 3000 30000]

For each size, a world is written as a YAML world file and as JSONL records (a world record and
N policy records); each is imported into a fresh database by `copal import` in a subprocess.
While it runs, this process plays a labeller: it takes the write lock (`BEGIN IMMEDIATE`, then
ROLLBACK) every few milliseconds and records the longest wait. The import is one transaction,
so that wait is roughly how long the import holds the lock.

Reported per format: seconds for the import call itself (parse, check, write; the subprocess's
interpreter start-up is left out so it does not flatter the ratio), the ratio of the largest to
the smallest size, and the longest writer wait. Linear import means the ratio stays near the
size ratio (target: within 15x for 10x the policies).
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3_000, 30_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows = policies(args.sizes, args.repeat)
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>10} {r['unit']:<7} {r['target']:<8} "
              f"{flag:<6} {r['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
