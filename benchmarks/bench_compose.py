"""The compose stage on one world of N clauses: what its cost grows with.

    python benchmarks/bench_compose.py [--clauses 1000 10000 100000] [--per-pattern 3 6 12]

A world of N clauses (a policy per 10 clauses, the six effects in turn, every tenth clause
also under the next policy) is written straight into a fresh store, then `copal run compose`'s
stage runs on it in this process with the offline engine as the generator (answers take no
network time, so the figures are copal's own). Per run: CPU seconds of this process for the
whole stage (the stage and the offline engine run in it, so other load on a shared machine
does not count; wall seconds in the note), CPU seconds until its first unit was asked (reading
the clauses and proposing: the planning), the compositions it wrote, and CPU milliseconds per
composition written after the planning.

Two sweeps, each in one run: the clauses at a fixed `per_pattern` (the planning reads every
clause, so it grows with them; the asking does not), and `per_pattern` at the largest size (the
compositions written grow with it). The stage is linear in the compositions it writes when its
time after the planning grows no faster than they do: the target is a ratio of milliseconds
per composition written (largest `per_pattern` over smallest) of at most 1.5.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_store import row

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EFFECTS = ("PERMIT", "PROHIBIT", "REQUIRE_GATE", "DISCLOSE", "WITHHOLD", "ROUTE")
WORLD = "bench-compose"
# Ratio of ms per composition written, largest per_pattern over smallest, at most.
LINEAR = 1.5


def build(path: Path, clauses: int) -> None:
    """A fresh store holding one world of `clauses` clauses."""
    from store.artifacts import writes
    from store.db import connect, write

    subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(path), "init"], check=True,
                   stdout=subprocess.DEVNULL)
    db = connect(path)
    with write(db):
        writes.insert_world(db, {"id": WORLD, "name": "Bench Compose", "industry": "retail",
                                 "use_case": "customer support", "risk_tier": "low",
                                 "context": "A shop used to measure compose."})
        policies = (clauses + 9) // 10
        writes.insert_policies(db, WORLD, [
            {"id": f"P{p:06d}", "kind": "allow", "text": f"Policy {p}."}
            for p in range(policies)])
        for i in range(clauses):
            p = i // 10
            ids = [f"P{p:06d}"] + ([f"P{(p + 1) % policies:06d}"] if i % 10 == 9 else [])
            writes.insert_clause(db, {
                "id": f"{WORLD}:C{i:06d}", "world_id": WORLD, "policy_ids": ids,
                "trigger": f"a customer asks about topic {i % 37}",
                "scope": f"the details of service {i % 53}", "effect": EFFECTS[i % 6],
                "source_span": f"clause {i}", "confidence": 0.9})
    db.conn.close()


def compose(path: Path, per_pattern: int) -> dict[str, Any]:
    """One compose run: CPU and wall seconds in all, CPU seconds to its first unit, and the
    compositions written."""
    from copal_tui.pipeline.base import CopalOptions, Options
    from copal_tui.pipeline.runner import run_stages

    opts = Options(worlds=[WORLD], generator="offline/heuristic", concurrency=8,
                   copal=CopalOptions(per_pattern=per_pattern))
    first: list[float] = []
    start, cpu = time.perf_counter(), time.process_time()

    def seen(p: Any) -> None:
        if not first and p.message == "" and p.total:
            first.append(time.process_time() - cpu)

    [progress] = run_stages(path, ["compose"], opts, on_progress=seen)
    wall, seconds = time.perf_counter() - start, time.process_time() - cpu
    conn = sqlite3.connect(path)
    try:
        written = conn.execute("SELECT COUNT(*) FROM compositions").fetchone()[0]
    finally:
        conn.close()
    assert progress.status == "done", progress
    return {"seconds": seconds, "wall": wall, "planning": first[0] if first else seconds,
            "written": written, "asked": progress.done}


def run(sizes: list[int], per_patterns: list[int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        by_size: dict[int, Path] = {}
        for n in sizes:
            by_size[n] = Path(tmp) / f"compose-{n}.db"
            build(by_size[n], n)
        # Once first, unmeasured: the first model call of a process loads litellm (seconds).
        warm = Path(tmp) / "warm.db"
        build(warm, 60)
        compose(warm, 1)
        base = sorted(per_patterns)[len(per_patterns) // 2]
        for n in sizes:
            r = compose(by_size[n], base)
            rows.append(row(f"compose ({n:,} clauses)", r["seconds"], "CPU s",
                            note=f"planning {r['planning']:.2f} CPU s; {r['asked']} asked, "
                                 f"{r['written']} written (per_pattern {base}); wall "
                                 f"{r['wall']:.2f} s"))
        largest = max(sizes)
        per_comp: dict[int, float] = {}
        for k in sorted(per_patterns):
            path = Path(tmp) / f"compose-{largest}-{k}.db"
            build(path, largest)
            r = compose(path, k)
            per_comp[k] = 1000 * (r["seconds"] - r["planning"]) / max(1, r["written"])
            rows.append(row(f"compose per composition ({largest:,} clauses, per_pattern {k})",
                            per_comp[k], "CPU ms", note=f"{r['written']} written in "
                            f"{r['seconds']:.2f} CPU s (planning {r['planning']:.2f} CPU s)"))
        lo, hi = min(per_comp), max(per_comp)
        ratio = per_comp[hi] / per_comp[lo] if per_comp[lo] else 0.0
        rows.append(row(f"compose ms/composition, per_pattern {hi} over {lo}", ratio, "x",
                        target=f"<= {LINEAR}", ok=ratio <= LINEAR,
                        note="linear in the compositions written when near 1"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clauses", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--per-pattern", type=int, nargs="+", default=[3, 6, 12])
    args = ap.parse_args(argv)
    print(json.dumps(run(args.clauses, args.per_pattern), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
