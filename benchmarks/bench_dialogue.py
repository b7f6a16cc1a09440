"""Dialogue screen benchmark: keypress repaint latency on a long judged conversation.

One dialogue of TURNS turns (half of them assistant turns, each tagged and judged by two
attempts of one judge, about a third of them wrong) is written with the store's own inserts.
Through the Pilot, in one run: the Pilot floor (down/up on a trivial app), then on the dialogue
screen `]` (move to the next wrong turn) and `a` (switch the judge attempt), and in the
judge-mistake review queue `n`/`p` (move to the next/previous mistake, which hands the lease
over too). Each figure is the median of the presses, reported as the difference over the
floor, in wall time (key to the screen settled) and in the process's CPU time per press; the
note gives the first press too (`a` first shows an attempt not seen before, so it renders that
attempt's lines).

`--compare OLD_TREE` measures this tree against another checkout (`git archive HEAD | tar -x -C
/tmp/old`) in one run: each round runs the presses once per tree, in a child process importing
that tree's code, alternating so the machine's load falls on both alike; it reports the median
over the rounds of each tree's figures.

    python benchmarks/bench_dialogue.py [--turns 130] [--presses 20] [--only review]
    python benchmarks/bench_dialogue.py --compare /tmp/old [--rounds 5] [--only review]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_store import row  # noqa: E402
from bench_tui_keys import floor_app  # noqa: E402
from generate import WORDS  # noqa: E402

DIALOGUE = "bench/long-1"
JUDGE = "bench/judge-0"
TARGET_MS = 20.0


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build(path: Path, turns: int, seed: int = 7) -> Path:
    """A database holding one judged dialogue of `turns` turns (user, assistant alternating)."""
    from store.artifacts import dialogue
    from store.db import connect, write

    subprocess.run([sys.executable, "-m", "copal_tui", "--db", str(path), "init"], check=True,
                   capture_output=True)
    rng = random.Random(seed)
    guidelines = [{"category": 1, "key": "greet", "phase": None, "text": _sentence(rng, 12)}]
    guidelines += [{"category": 2, "key": "Refund", "phase": p, "text": _sentence(rng, 14)}
                   for p in range(1, 6)]
    guidelines += [{"category": 3, "key": f"cond{c}", "phase": None, "text": _sentence(rng, 10)}
                   for c in range(4)]
    rows: list[dict[str, Any]] = []
    for i in range(turns):
        if i % 2 == 0:
            rows.append({"turn_index": i, "role": "user", "content": _sentence(rng, 18)})
            continue
        g = guidelines[1 + (i // 2) % (len(guidelines) - 1)]
        violation = i % 7 == 1
        rows.append({"turn_index": i, "role": "assistant", "content": _sentence(rng, 36),
                     "category": g["category"], "key": g["key"], "phase": g["phase"],
                     "violation": violation,
                     "guideline_text": _sentence(rng, 10) if violation else None,
                     "evidence": _sentence(rng, 12) if violation else None})
    attempts = []
    for attempt in (1, 2):
        preds = []
        for t in rows:
            if t["role"] != "assistant":
                continue
            wrong = (t["turn_index"] // 2 + attempt) % 3 == 0
            phase = t["phase"]
            if wrong and not t["violation"]:
                phase = 9  # the wrong phase: a wrong guideline
            preds.append({"turn_index": t["turn_index"], "category": t["category"],
                          "key": t["key"], "phase": phase,
                          "violation": t["violation"] != wrong,
                          "reason": _sentence(rng, 20)})
        attempts.append(({"dialogue_id": DIALOGUE, "judge": JUDGE, "attempt": attempt,
                          "source": "import"}, preds))
    db = connect(path)
    try:
        with write(db):
            dialogue.insert_dialogue(db, {"id": DIALOGUE, "domain": "airline"}, guidelines,
                                         rows)
            for a, preds in attempts:
                dialogue.replace_attempt(db, a, preds)
    finally:
        db.close()
    return path


@dataclass(frozen=True)
class Presses:
    """Medians over the presses of one case: wall ms from a key to the screen settled, the
    process's CPU ms (every thread) in that time, and the first press's wall ms."""

    wall: float
    cpu: float
    first: float


async def _latency(app: Any, keys: list[str], open_dialogue: bool = False,
                   warm: float = 0.5) -> Presses:
    walls, cpus = [], []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(warm)
        if open_dialogue:
            pilot.app.action_open("dialogue", dialogue_id=DIALOGUE)
            await pilot.pause(warm)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for k in keys:
            t, c = time.perf_counter(), time.process_time()
            await pilot.press(k)
            await pilot.pause()
            walls.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
    return Presses(statistics.median(walls), statistics.median(cpus), walls[0])


def _floor(keys: list[str]) -> Presses:
    return asyncio.run(_latency(floor_app(), keys))


# name: (app options, keys, open the dialogue screen first)
CASES: dict[str, tuple[dict[str, Any], list[str], bool]] = {
    "next wrong turn (])": ({}, ["right_square_bracket"], True),
    "switch attempt (a)": ({}, ["a"], True),
    "review queue move (n/p)": ({"mode": "label", "suite": "dialogue", "annotator": "bench"},
                                ["n", "p"], False),
}
SHORT = {"]": "next wrong turn (])", "a": "switch attempt (a)",
         "review": "review queue move (n/p)"}


def keypress(db: Path, turns: int, presses: int = 20,
             only: list[str] | None = None) -> list[dict[str, Any]]:
    from copal_tui.tui.app import make_app
    from copal_tui.tui.settings import Settings

    floor = _floor(["down", "up"] * (presses // 2))
    rows = [row("Pilot floor (trivial app, down/up)", floor.wall, "ms",
                note=f"{floor.cpu:.1f} ms CPU per press")]
    for name, (kw, keys, open_dialogue) in CASES.items():
        if only and name not in only:
            continue
        app = make_app(db, settings=Settings(), **kw)
        got = asyncio.run(_latency(app, (keys * presses)[:presses], open_dialogue))
        over = got.wall - floor.wall
        # The first press may render what no earlier key showed (an attempt not yet seen).
        rows.append(row(f"keypress dialogue {turns} turns: {name}", over, "ms over floor",
                        f"<= {TARGET_MS:g} ms", over <= TARGET_MS,
                        note=f"{got.wall:.1f} ms, {(got.wall / floor.wall if floor.wall else 0):.1f}x "
                             f"floor; CPU {got.cpu - floor.cpu:+.1f} ms over the floor's "
                             f"{floor.cpu:.1f}; first press {got.first - floor.wall:.0f} ms over"))
        rows.append(row(f"keypress dialogue {turns} turns: {name}, CPU", got.cpu - floor.cpu,
                        "ms over floor"))
    return rows


def run(turns: int = 130, presses: int = 20, only: list[str] | None = None,
        ) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        db = build(Path(tmp) / "dialogue.db", turns)
        return keypress(db, turns, presses, only)


def compare(old: Path, rounds: int, argv: list[str]) -> list[dict[str, Any]]:
    """Alternate this tree and `old`, one child process per tree and round (each importing
    its tree's code), and report the median over the rounds of each figure."""
    trees = {"new": HERE.parent, "old": old.resolve()}
    got: dict[tuple[str, str], list[float]] = {}
    for r in range(rounds):
        for tag in (("new", "old") if r % 2 == 0 else ("old", "new")):
            env = {**os.environ, "PYTHONPATH": str(trees[tag])}
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json",
                                  *argv], env=env, check=True, capture_output=True, text=True)
            for one in json.loads(out.stdout.strip().splitlines()[-1]):
                got.setdefault((one["name"], tag), []).append(float(one["value"]))
    rows = []
    for name in dict.fromkeys(n for n, _ in got):
        new, old_ = (statistics.median(got.get((name, t), [float("nan")]))
                     for t in ("new", "old"))
        unit = "ms" if name.startswith("Pilot floor") else "ms over floor"
        rows.append(row(name, new, unit, note=f"old {old_:.1f} -> new {new:.1f} (median of "
                                              f"{rounds} rounds, alternating)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=130)
    ap.add_argument("--presses", type=int, default=20)
    ap.add_argument("--only", action="append", choices=sorted(SHORT),
                    help="measure only this case (repeatable)")
    ap.add_argument("--compare", type=Path, metavar="OLD_TREE",
                    help="measure against another checkout, alternating")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    passed = ["--turns", str(args.turns), "--presses", str(args.presses)]
    for one in args.only or []:
        passed += ["--only", one]
    only = [SHORT[o] for o in args.only] if args.only else None
    rows = compare(args.compare, args.rounds, passed) if args.compare \
        else run(args.turns, args.presses, only)
    if args.json:
        print(json.dumps(rows))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        flag = "" if r["ok"] is None else ("ok" if r["ok"] else "MISSED")
        print(f"{r['name']:<{width}}  {r['value']:>8} {r['unit']:<14} {r['target']:<10} "
              f"{flag:<6} {r['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
