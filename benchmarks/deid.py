"""De-identification benchmark: pairs per second through `Deidentifier.redact`, and the peak
memory of a process that redacts them.

    python benchmarks/deid.py [--pairs 100000]

A pair is a query of one to three sentences and a response of two to six, built from the
test corpora's sentences (tests/fixtures/deid): clean pairs draw only identifier-free
messages; pairs with identifiers carry one fresh identifier in the query and one in the
response (a new e-mail, card, phone, address... each time, as real traffic has, so the
engine's caches only help where values really repeat); the mixed row is one pair in five with
identifiers. Pairs are built in blocks outside the timed part.

The measurement runs in a child process, which reports its wall and CPU time and its own peak
resident memory (VmHWM). The figure is pairs per second of the child's CPU time, one core's
rate; the wall-clock rate and the machine's load average are in the note, since on a shared
machine the wall clock also counts other tenants' work. Target: 10,000 pairs per CPU-second
for the mixed traffic, so that de-identification leaves most of an import's budget (2,000
pairs/s on two cores, 300 MiB) to the import itself.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT / "tests" / "fixtures" / "deid"
BLOCK = 2_000
TARGET = 10_000


def _corpus_generator() -> Any:
    """The corpus generator's module (its templates and identifier makers), loaded from its
    file under its own name: benchmarks/ has a `generate` module of its own, which a run of
    every benchmark (run.py) has imported already."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("deid_corpus_generate",
                                                  CORPUS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pairs(n: int, share_with_ids: float, seed: int) -> Iterator[list[tuple[str, str]]]:
    """`n` pairs in blocks of BLOCK: (query, response)."""
    generate = _corpus_generator()

    rng = random.Random(seed)
    clean = [json.loads(line)["text"]
             for line in (CORPUS / "clean.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds = [k for k in generate.TEMPLATES if k != "NAME"]

    def planted() -> str:
        kind = rng.choice(kinds)
        item = generate.planted_item(kind, rng)
        return rng.choice(generate.TEMPLATES[kind]).replace("{v}", str(item["value"]))

    done = 0
    while done < n:
        block = []
        for _ in range(min(BLOCK, n - done)):
            query = rng.sample(clean, rng.randint(1, 3))
            response = rng.sample(clean, rng.randint(2, 6))
            if rng.random() < share_with_ids:
                query[0] = planted()
                response.insert(rng.randrange(len(response) + 1), planted())
            block.append((" ".join(query), " ".join(response)))
        done += len(block)
        yield block


def measure(n: int) -> dict[str, Any]:
    """Runs in the child: each kind of traffic timed alone, then the process's peak memory."""
    sys.path.insert(0, str(ROOT))
    from copal_tui.domain.deid import Deidentifier

    engine = Deidentifier()
    out: dict[str, Any] = {"pairs": n}
    for name, share in (("clean", 0.0), ("with_ids", 1.0), ("mixed", 0.2)):
        wall = cpu = 0.0
        chars = 0
        for block in _pairs(n, share, seed=7):
            chars += sum(len(q) + len(r) for q, r in block)
            t, c = time.perf_counter(), time.process_time()
            for query, response in block:
                engine.redact((query, response))
            wall += time.perf_counter() - t
            cpu += time.process_time() - c
        out[name] = {"wall": wall, "cpu": cpu, "chars_per_pair": chars / n}
    out["load"] = os.getloadavg()[0]
    with open("/proc/self/status") as f:
        out["peak_mib"] = next(int(line.split()[1]) for line in f
                               if line.startswith("VmHWM:")) / 1024
    return out


def run(n: int) -> list[dict[str, Any]]:
    """The benchmark's rows for benchmarks/run.py: the child is started with `n` pairs."""
    from bench_store import row

    done = subprocess.run([sys.executable, str(Path(__file__)), "--pairs", str(n), "--child"],
                          check=True, capture_output=True, text=True)
    res = json.loads(done.stdout)
    rows = []
    for name, label in (("clean", "clean pairs"), ("with_ids", "pairs with identifiers"),
                        ("mixed", "mixed, 1 in 5 with identifiers")):
        r = res[name]
        per_cpu = n / r["cpu"]
        target = f">= {TARGET:,}" if name == "mixed" else ""
        rows.append(row(f"de-identify: {label}", per_cpu, "pairs/CPU-s", target,
                        per_cpu >= TARGET if name == "mixed" else None,
                        f"{n / r['wall']:,.0f} pairs/s of wall time at load "
                        f"{res['load']:.1f}; {r['chars_per_pair']:.0f} chars a pair; "
                        f"{n:,} pairs"))
    rows.append(row("de-identify: peak memory", res["peak_mib"], "MiB", "< 300 MiB",
                    res["peak_mib"] < 300, "VmHWM of the child, all three runs"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.pairs)))
        return 0
    sys.path.insert(0, str(HERE))
    for r in run(args.pairs):
        print(f"{r['name']:<44} {r['value']:>10,.1f} {r['unit']:<12} {r['target']:<10} "
              f"{r['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
