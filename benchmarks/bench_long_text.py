"""Long responses in the label queue: the time to show one, to page it, to quit and to label it,
and the process's peak memory, for a response of 100 bytes, 10 MB and 200 MB.

    python benchmarks/bench_long_text.py [--sizes 100,10000000,200000000] [--json OUT]

Each size gets a database of the two sample showcase worlds (imported through `copal import`)
plus three unlabelled responses of that size, and a fresh process that opens `copal label`
headless through the Pilot (120x40) and times, from `run_test`: the response on screen (the
subject set and the refresh after it), then each key to the refresh after it: `>` (the next
part), `<`, `c` (a label, which hashes the whole response as stored) and `q` until the app has
exited. Peak memory is the child's maximum resident set size. One run per size (the 200 MB
database takes a while to write); the figures are seconds and MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bench_store import row

SIZES = (100, 10_000_000, 200_000_000)
EXTRA = 3  # unlabelled responses, every one of them long: the queue opens on one


def build(folder: Path, size: int) -> Path:
    """The showcase worlds and `EXTRA` unlabelled responses of `size` bytes (ASCII words)."""
    from copal_tui.resources import sample_worlds_dir

    db = folder / f"long-{size}.db"
    samples = sample_worlds_dir()
    copal = [sys.executable, "-m", "copal_tui", "--db", str(db)]
    subprocess.run([*copal, "init"], check=True, capture_output=True)
    subprocess.run([*copal, "import", *(str(samples / n) for n in (
        "harbor_clinics.yaml", "harbor_clinics.jsonl", "meridian_bank.yaml",
        "meridian_bank.jsonl"))], check=True, capture_output=True)
    extra = folder / "extra.jsonl"
    extra.write_text("".join(json.dumps({
        "type": "response", "id": f"harbor-clinics:I0{n + 1}:long", "item_id":
        f"harbor-clinics:I0{n + 1}", "model": "bench/long", "variant": "base",
        "text": "placeholder"}) + "\n" for n in range(EXTRA)), encoding="utf-8")
    subprocess.run([*copal, "import", str(extra)], check=True, capture_output=True)
    text = ("word " * (size // 5 + 1))[:size]
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE responses SET text = ? WHERE model = 'bench/long'", (text,))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


async def _timed(db: Path) -> dict[str, float]:
    from copal_tui.tui.app import make_app
    from copal_tui.tui.settings import Settings

    out: dict[str, float] = {}
    start = time.perf_counter()
    app = make_app(db, mode="label", annotator="bench", settings=Settings())
    async with app.run_test(size=(120, 40)) as pilot:
        while getattr(app.screen, "subject", None) is None:
            await asyncio.sleep(0.01)
        await pilot.pause()
        out["shown"] = time.perf_counter() - start
        for name, key in (("next part", "greater_than_sign"),
                          ("previous part", "less_than_sign"), ("label", "c")):
            began = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            out[name] = time.perf_counter() - began
        began = time.perf_counter()
        await pilot.press("q")
        while app.return_code is None:
            await asyncio.sleep(0.01)
        out["quit"] = time.perf_counter() - began
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def measure(size: int, folder: Path) -> dict[str, float]:
    db = build(folder, size)
    done = subprocess.run([sys.executable, __file__, "--child", str(db)], check=True,
                          capture_output=True, text=True)
    db.unlink()
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def rows(sizes: tuple[int, ...] = SIZES) -> list[dict[str, Any]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            got = measure(size, Path(tmp))
            label = f"{size:,} B response"
            for name in ("shown", "next part", "previous part", "label", "quit"):
                out.append(row(f"label queue, {label}: {name}", got[name], "s"))
            out.append(row(f"label queue, {label}: peak memory", got["peak_mib"], "MiB"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(asyncio.run(_timed(args.child))))
        return 0
    table = rows(tuple(int(s) for s in args.sizes.split(",")))
    for r in table:
        print(f"{r['name']:<55} {r['value']:>10.3f} {r['unit']}")
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
