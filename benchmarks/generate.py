"""Generate a realistic benchmark database through the public interchange import.

N worlds x items x target models, with judgments from several judges and labels from several
annotators, all from a fixed seed: the same arguments always give the same database.

    python benchmarks/generate.py OUT.db [--responses 100000] [--models 5] [--judges 3]
                                         [--labels 10000] [--annotators 3] [--seed 7]
                                         [--chunk 100000]

The records are imported in files of whole worlds, about `--chunk` responses each (each file one
`copal import`, so one transaction); the import streams, so one file of any size also works.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from copal_tui.domain.taxonomy import PATTERN_ANCHORS, PATTERN_FACETS, Pattern

WORDS = ("account balance refund order delivery appointment claim policy fee card transfer "
         "invoice schedule status verification address record result plan upgrade ticket route "
         "manager discount warranty prescription enrolment grade booking baggage courier").split()
PER_WORLD_ITEMS = 1000


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def records(n_responses: int, n_models: int, n_judges: int, n_labels: int, n_annotators: int,
            seed: int):
    rng = random.Random(seed)
    n_items = max(1, n_responses // n_models)
    n_worlds = max(1, (n_items + PER_WORLD_ITEMS - 1) // PER_WORLD_ITEMS)
    models = [f"bench/model-{m}" for m in range(n_models)]
    judges = [f"bench/judge-{j}" for j in range(n_judges)]
    annotators = [f"annotator{a}" for a in range(n_annotators)]
    patterns = list(Pattern)
    labelled = 0
    item_no = 0
    for w in range(n_worlds):
        wid = f"bench-{w:03d}"
        yield {"type": "world", "id": wid, "name": f"Bench World {w}", "industry": "benchmark",
               "use_case": "generated load", "risk_tier": "medium",
               "context": " ".join(_sentence(rng, 12) for _ in range(8))}
        for p in range(16):
            yield {"type": "policy", "id": f"P{p:02d}", "world_id": wid,
                   "kind": ("allow", "deny", "procedure")[p % 3], "text": _sentence(rng, 14)}
        clause_ids = []
        for c in range(16):
            effect = ("PERMIT", "DISCLOSE", "PROHIBIT", "WITHHOLD", "REQUIRE_GATE", "ROUTE")[c % 6]
            cid = f"{wid}:C{c:02d}"
            clause_ids.append((cid, effect))
            yield {"type": "clause", "id": cid, "world_id": wid, "policy_ids": [f"P{c:02d}"],
                   "trigger": _sentence(rng, 4), "scope": _sentence(rng, 3), "effect": effect,
                   "source_span": "span"}
        comps = []
        for k, pattern in enumerate(patterns * 3):
            lic, con = PATTERN_ANCHORS[pattern]
            a = next(c for c, e in clause_ids[k % 4:] + clause_ids if e in lic)
            b = next(c for c, e in clause_ids[(k + 3) % 6:] + clause_ids if e in con)
            kid = f"{wid}:K{k:02d}"
            comps.append((kid, pattern, a, b))
            yield {"type": "composition", "id": kid, "world_id": wid, "clause_ids": [a, b],
                   "pattern": pattern.value}
        for _ in range(min(PER_WORLD_ITEMS, n_items - item_no)):
            kid, pattern, a, b = comps[item_no % len(comps)]
            facet = PATTERN_FACETS[pattern][(item_no // len(comps)) % 3]
            iid = f"{wid}:I{item_no:06d}"
            item_no += 1
            required = [{"id": "R1", "text": _sentence(rng, 6), "kind": "content", "clause_id": a}]
            forbidden = [{"id": "F1", "text": _sentence(rng, 6), "kind": "content", "clause_id": b}]
            if rng.random() < 0.4:
                required.append({"id": "R2", "text": _sentence(rng, 5), "kind": "gate",
                                 "clause_id": a})
            yield {"type": "item", "id": iid, "world_id": wid, "composition_id": kid,
                   "pattern": pattern.value, "facet": facet.value,
                   "query": " ".join(_sentence(rng, 9) for _ in range(2)),
                   "required": required, "forbidden": forbidden, "method": "copal",
                   "parent_item_id": None, "selected": True}
            ids = [c["id"] for c in required + forbidden]
            for model in models:
                rid = f"{iid}@{model}"
                yield {"type": "response", "id": rid, "item_id": iid, "model": model,
                       "text": " ".join(_sentence(rng, 11) for _ in range(4))}
                truth = [x for x in ids if rng.random() < (0.8 if x.startswith("R") else 0.25)]
                for judge in judges:
                    marks = [x for x in ids if (x in truth) != (rng.random() < 0.1)]
                    yield {"type": "judgment", "id": f"{rid}+{judge}", "response_id": rid,
                           "judge": judge, "mode": "contract", "observed": marks,
                           "facet": None, "rationale": "generated"}
                if labelled < n_labels and rng.random() < 0.5:
                    for ann in annotators:
                        if labelled >= n_labels:
                            break
                        marks = [x for x in ids if (x in truth) != (rng.random() < 0.05)]
                        yield {"type": "label", "response_id": rid, "annotator": ann,
                               "observed": marks, "facet": None, "note": None,
                               "created_at": "2026-11-01T00:00:00Z"}
                        labelled += 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--responses", type=int, default=100_000)
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--labels", type=int, default=10_000)
    ap.add_argument("--annotators", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--chunk", type=int, default=100_000,
                    help="Responses per imported file (whole worlds; one transaction each).")
    args = ap.parse_args(argv)
    if args.out.exists():
        print(f"{args.out} exists", file=sys.stderr)
        return 2
    copal = [sys.executable, "-m", "copal_tui", "--db", str(args.out)]
    subprocess.run([*copal, "init"], check=True, stdout=subprocess.DEVNULL)
    per_world = PER_WORLD_ITEMS * args.models
    worlds_per_file = max(1, args.chunk // per_world)
    n = files = 0
    wrote = imported = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        stream = records(args.responses, args.models, args.judges, args.labels,
                         args.annotators, args.seed)
        pending = next(stream, None)
        while pending is not None:
            started = time.perf_counter()
            worlds = 0
            with path.open("w", encoding="utf-8") as fh:
                while pending is not None:
                    if pending["type"] == "world":
                        if worlds == worlds_per_file:
                            break  # this world starts the next file
                        worlds += 1
                    fh.write(json.dumps(pending, separators=(",", ":")) + "\n")
                    n += 1
                    pending = next(stream, None)
            wrote += time.perf_counter() - started
            started = time.perf_counter()
            subprocess.run([*copal, "import", str(path)], check=True, stdout=subprocess.DEVNULL)
            imported += time.perf_counter() - started
            files += 1
    print(json.dumps({"records": n, "files": files, "write_s": round(wrote, 2),
                      "import_s": round(imported, 2),
                      "import_records_per_s": round(n / imported)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
