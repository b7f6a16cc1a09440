"""The report with the real-traffic audit at scale: `copal report --json` over a store of N
traffic pairs (default 1,000,000), each labelled by the automatic labeller, 1,000 of them by two
annotators, beside the same report over the same store with no traffic, in one run.

    python benchmarks/traffic_report.py [--pairs N] [--db PATH] [--json OUT]

The pairs are written straight into the tables (no de-identification: `traffic_import.py`
measures the import), with their labels as annotation events, so the store is what an audit
leaves. Each report runs in a fresh process (`python -m copal_tui report --json`), best of
three, wall and CPU time; the ratio is the traffic report's time over the plain one's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LABELLED = 1_000


def _build(path: Path, pairs: int) -> None:
    subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(path), "init"], check=True,
                   stdout=subprocess.DEVNULL)
    from store.db import connect, write

    db = connect(path)
    with write(db):
        db.execute("INSERT INTO traffic_imports (id, source, file_name, file_sha256, layout, "
                   "records, pairs, duplicates, created_at) VALUES ('ti-bench', 'web', "
                   "'bench.jsonl', '0', 'pairs', ?, ?, 0, '2026-01-01T00:00:00Z')",
                   (pairs, pairs))
        # Sources alternate web / app; the labeller's category and verdict follow the id.
        db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) "
            "INSERT INTO traffic_pairs (id, import_id, source, line, query, response, "
            "content_key) SELECT printf('tp-%016x', i), 'ti-bench', "
            "CASE i % 3 WHEN 0 THEN 'app' ELSE 'web' END, i + 1, 'a query <EMAIL_1>', "
            "'a response', printf('%064x', i) FROM n", (pairs,))
        db.execute(
            "INSERT INTO traffic_judgments (pair_id, judge, category, erroneous, reason, "
            "created_at) SELECT id, 'bench/judge', CASE line % 5 WHEN 0 THEN 'none' "
            "WHEN 1 THEN 'single' WHEN 2 THEN 'single' ELSE 'multi' END, "
            "(line % 7 = 0), 'bench', '2026-01-01T00:00:00Z' FROM traffic_pairs")
        # bob disagrees with ann on the category of one pair in ten.
        for who, flip in (("ann", 0), ("bob", 1)):
            db.execute(
                "INSERT INTO annotations (suite, subject, annotator, role, action, payload, "
                "created_at) SELECT 'traffic', id, ?, 'annotator', 'label', "
                "json_object('category', CASE (line + (? AND line % 10 = 0)) % 3 WHEN 0 THEN "
                "'none' WHEN 1 THEN "
                "'single' ELSE 'multi' END, 'erroneous', json(CASE WHEN line % 6 = 0 THEN "
                "'true' ELSE 'false' END), 'sensitive', json('false')), "
                "'2026-01-01T00:00:00Z' FROM traffic_pairs ORDER BY line LIMIT ?",
                (who, flip, LABELLED))
    db.conn.close()


def _report(path: Path) -> tuple[float, float]:
    """Best of three: (wall, CPU of the child) seconds of `copal report --json`."""
    best = (float("inf"), float("inf"))
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(path), "report",
                        "--json", "--bootstrap", "200"], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        best = min(best, (wall, cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, default=None, help="keep the traffic store here")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="copal-traffic-report-"))
    try:
        plain, traffic = folder / "plain.db", args.db or folder / "traffic.db"
        subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(plain), "init"],
                       check=True, stdout=subprocess.DEVNULL)
        if not traffic.exists():
            start = time.perf_counter()
            _build(traffic, args.pairs)
            print(f"built {args.pairs} pairs in {time.perf_counter() - start:.1f} s")
        plain_t, traffic_t = _report(plain), _report(traffic)
        out = {"pairs": args.pairs, "labelled": LABELLED, "load": os.getloadavg()[:2],
               "plain": {"wall": plain_t[0], "cpu": plain_t[1]},
               "traffic": {"wall": traffic_t[0], "cpu": traffic_t[1]},
               "ratio_wall": traffic_t[0] / plain_t[0]}
        print(json.dumps(out, indent=2))
        if args.json:
            args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
