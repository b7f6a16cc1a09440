"""Run every benchmark and print one table (ratios measured side by side in one run).

    python benchmarks/run.py [--quick | --scale 100k | --scale 1m] [--cache DIR] [--json OUT]

--quick (`--scale quick`) uses small databases (CI runs it so the scripts cannot rot: it checks
they run, not how fast). The default, `--scale 100k`: a 1k and a 100k response database (3
judges, 10k labels from 3 annotators). `--scale 1m`: a 100k and a 1,000,000 response database
(3 judges, 30k labels); generating the million takes a long while, so `--cache DIR` keeps the
generated databases there and reuses them on the next run (the labelling rows add a few
hundred labels from `bench-*` annotators to the cached large database each run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


# scale -> (small responses, small labels, big responses, big labels)
SCALES = {"quick": (500, 500, 2_000, 500), "100k": (1_000, 1_000, 100_000, 10_000),
          "1m": (100_000, 10_000, 1_000_000, 30_000)}
# Targets per database size: first paint (x the minimal app) and the report's allowance over
# the metric libraries' import time (seconds).
PAINT_TARGET = {"1m": 1.5}
REPORT_TARGET = {"100k": 1.0, "1m": 5.0}


def _generate(folder: Path, responses: int, labels: int, cache: Path | None) -> Path:
    name = f"bench-{responses}-{labels}.db"
    if cache is not None and (cache / name).exists():
        return cache / name
    path = folder / name
    subprocess.run([sys.executable, str(HERE / "generate.py"), str(path), "--responses",
                    str(responses), "--labels", str(labels)], check=True, capture_output=True)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        shutil.move(str(path), cache / name)  # generate.py leaves no -wal or -shm file
        return cache / name
    return path


def _report_targets(rows: list[dict[str, Any]]) -> None:
    """Judge each `report --json (size)` row against its allowance plus the libraries' import
    time measured in the same run (bench_store judges only the 100k row)."""
    import bench_store

    lib = next((r["value"] for r in rows if r["name"] == bench_store.LIBRARIES_ROW), None)
    for r in rows:
        size = r["name"].removeprefix("report --json (").removesuffix(")")
        if r["name"].startswith("report --json (") and size in REPORT_TARGET and lib is not None:
            r["target"] = f"< {REPORT_TARGET[size]:g} s + import ({size})"
            r["ok"] = r["value"] < REPORT_TARGET[size] + lib


def machine() -> dict[str, Any]:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(),
            "memory_gib": round(mem, 1), "python": platform.python_version(),
            "platform": platform.platform()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Same as --scale quick.")
    ap.add_argument("--scale", choices=list(SCALES), default="100k")
    ap.add_argument("--cache", type=Path, help="Keep the generated databases here and reuse them.")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path, help="Also write the table as Markdown.")
    args = ap.parse_args(argv)

    import bench_compose
    import bench_dialogue
    import bench_import
    import bench_pipeline
    import bench_store
    import bench_tui
    import deid
    import traffic_import

    if args.quick:
        args.scale = "quick"
    small, small_labels, big, labels = SCALES[args.scale]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        small_db = _generate(t, small, small_labels, args.cache)
        big_db = _generate(t, big, labels, args.cache)
        label_big, label_small = _size(big), _size(small)
        dbs = {label_small: small_db, label_big: big_db}
        paint = {label: PAINT_TARGET.get(label, 1.3) for label in dbs}
        repeat = 2 if args.quick else 3
        rows += bench_tui.cold_start(dbs, repeat=repeat, targets=paint)
        rows += bench_tui.pilot_start(dbs, repeat=repeat, targets=paint)
        rows += bench_tui.memory(dbs)
        rows += bench_tui.keypress(big_db)
        rows += bench_dialogue.run(turns=130, presses=6 if args.quick else 20)
        rows += bench_store.report(small_db, label_small)
        rows += bench_store.report(big_db, label_big, libraries=True)
        _report_targets(rows)
        rows += bench_pipeline.throughput([4] if args.quick else [8, 32, 128],
                                          latency=0.05 if args.quick else 0.2)
        rows += bench_store.labelling(big_db, processes=8, per_process=20 if args.quick else 200)
        rows += bench_store.capacity(big_db, [4] if args.quick else [8, 16, 32],
                                     per_process=5 if args.quick else 100)
        rows += bench_pipeline.client_rate(50 if args.quick else 400)
        rows += bench_store.interchange(small_db)
        # Traffic's import and queue at as many pairs as the large store has responses.
        rows += traffic_import.run(big, copal_db=big_db)
    rows += bench_import.policies([300, 3_000] if args.quick else [3_000, 30_000],
                                  repeat=1 if args.quick else 3)
    rows += bench_import.interchange([1_000, 5_000] if args.quick else [10_000, 100_000],
                                     repeat=1)
    rows += bench_compose.run([300, 3_000] if args.quick else [1_000, 10_000, 100_000],
                              [2, 4] if args.quick else [3, 6, 12])
    rows += deid.run(2_000 if args.quick else 100_000)
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>10} {r['unit']:<14} {r['target']:<12} "
              f"{flag:<6} {r['note']}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "quick": args.quick,
                                         "scale": args.scale,
                                         "results": rows}, indent=2), encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(machine(), rows), encoding="utf-8")
    return 0


def _size(responses: int) -> str:
    return f"{responses / 1e6:g}m" if responses >= 1_000_000 else f"{responses / 1000:g}k"


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
