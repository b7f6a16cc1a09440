"""Run every benchmark and print one table (ratios measured side by side in one run).

    python benchmarks/run.py [--quick] [--json OUT]

--quick uses small databases (CI runs it so the scripts cannot rot: it checks they run, not how
fast). Without it: a 1k and a 100k response database (3 judges, 10k labels from 3 annotators).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _generate(path: Path, responses: int, labels: int) -> Path:
    subprocess.run([sys.executable, str(HERE / "generate.py"), str(path), "--responses",
                    str(responses), "--labels", str(labels)], check=True, capture_output=True)
    return path


def machine() -> dict[str, Any]:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(),
            "memory_gib": round(mem, 1), "python": platform.python_version(),
            "platform": platform.platform()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path, help="Also write the table as Markdown.")
    args = ap.parse_args(argv)

    import bench_import
    import bench_pipeline
    import bench_store
    import bench_tui

    big, small = (2_000, 500) if args.quick else (100_000, 1_000)
    labels = 500 if args.quick else 10_000
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        small_db = _generate(t / "small.db", small, min(labels, small))
        big_db = _generate(t / "big.db", big, labels)
        label_big, label_small = f"{big / 1000:g}k", f"{small / 1000:g}k"
        rows += bench_tui.cold_start({label_small: small_db, label_big: big_db},
                                     repeat=2 if args.quick else 5)
        rows += bench_tui.keypress(big_db)
        rows += bench_store.report(small_db, label_small)
        rows += bench_store.report(big_db, label_big, libraries=True)
        rows += bench_pipeline.throughput([4] if args.quick else [8, 32, 128],
                                          latency=0.05 if args.quick else 0.2)
        rows += bench_store.labelling(big_db, processes=8, per_process=20 if args.quick else 200)
        rows += bench_store.interchange(small_db)
    rows += bench_import.policies([300, 3_000] if args.quick else [3_000, 30_000],
                                  repeat=1 if args.quick else 3)
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>10} {r['unit']:<14} {r['target']:<12} "
              f"{flag:<6} {r['note']}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "quick": args.quick,
                                         "results": rows}, indent=2), encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(machine(), rows), encoding="utf-8")
    return 0


def markdown(m: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table, headed by the machine they were measured on."""
    out = [f"Measured {m['date']} on {m['cores']} cores, {m['memory_gib']} GiB, Python "
           f"{m['python']} ({m['platform']}).", "",
           "| benchmark | value | unit | target | met | note |", "|---|---:|---|---|---|---|"]
    for r in rows:
        met = "" if r["ok"] is None else ("yes" if r["ok"] else "**no**")
        out.append(f"| {r['name']} | {r['value']} | {r['unit']} | {r['target']} | {met} | "
                   f"{r['note']} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
