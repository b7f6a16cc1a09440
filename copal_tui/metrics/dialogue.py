"""The report's `dialogue_judging` section: CompliBench metrics per judge and domain.

Reads the stored truth and predictions (store.dialogue_sql) and scores them with
`copal_tui.domain.dialogue`: per judge, per attempt, per domain (and `all`), micro-averaged
over turns, then averaged over the judge's attempts. A failed attempt (the call failed, nothing
usable) is not scored but listed in `exclusions`; an attempt that left turns out is scored, the
missing turns counting as wrong. A judge whose every attempt gave verdicts without guidelines is
scored as a binary judge (verdict-only accuracy, precision and recall; no strict figure).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from copal_tui.domain.dialogue import (
    Guideline,
    TurnPrediction,
    TurnTruth,
    mean_over_attempts,
    score_attempt,
)
from store import dialogue_sql
from store.db import Database

ALL = "all"


def dialogue_judging(db: Database) -> dict[str, Any]:
    """{"rows": [...], "exclusions": [...]} (rows empty when no dialogue was judged)."""
    truth: dict[str, list[TurnTruth]] = defaultdict(list)
    domain_of: dict[str, str] = {}
    for did, domain, turn, cat, key, phase, violation in dialogue_sql.truth_turns(db):
        domain_of[did] = domain
        truth[did].append(TurnTruth(turn, Guideline.of(cat, key, phase), bool(violation)))
    preds: dict[tuple[str, int, str], list[TurnPrediction]] = defaultdict(list)
    for did, judge, attempt, turn, cat, key, phase, violation in dialogue_sql.predictions(db):
        g = None if cat is None and key is None else Guideline.of(cat, key, phase)
        preds[(judge, attempt, did)].append(TurnPrediction(turn, g, bool(violation)))
    # judge -> attempt -> dialogues judged in it; plus binary flags and failures
    scored: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    binary: dict[str, list[bool]] = defaultdict(list)
    exclusions: list[dict[str, Any]] = []
    for did, judge, attempt, is_binary, failure in dialogue_sql.attempts(db):
        if failure is not None:
            exclusions.append({"judge": judge, "dialogue": did, "attempt": attempt,
                               "reason": failure})
            continue
        scored[judge][attempt].append(did)
        binary[judge].append(bool(is_binary))
    rows: list[dict[str, Any]] = []
    for judge in sorted(scored):
        is_binary = all(binary[judge])
        domains = sorted({domain_of[d] for ds in scored[judge].values() for d in ds})
        for domain in [*domains, ALL]:
            per_attempt = []
            convs: set[str] = set()
            for attempt in sorted(scored[judge]):
                ds = [d for d in scored[judge][attempt] if domain == ALL or domain_of[d] == domain]
                if not ds:
                    continue
                convs.update(ds)
                per_attempt.append(score_attempt(
                    [(truth[d], preds.get((judge, attempt, d), [])) for d in ds],
                    binary=is_binary))
            if not per_attempt:
                continue
            m = mean_over_attempts(per_attempt)
            rows.append({
                "judge": judge, "domain": domain, "conversations": len(convs),
                "attempts": m["attempts"], "binary": is_binary,
                # turns of the conversations judged (Category 1 excluded), not per attempt
                "compliant_turns": sum(1 for d in convs for t in truth[d]
                                       if t.guideline.category != 1 and not t.violation),
                "violation_turns": sum(1 for d in convs for t in truth[d]
                                       if t.guideline.category != 1 and t.violation),
                "compliant_turn_accuracy": m["compliant_turn_accuracy"],
                "violation_detection_accuracy": m["violation_detection_accuracy"],
                "strict_violation_detection_accuracy": m["strict_violation_detection_accuracy"],
                "conversation_accuracy": m["conversation_accuracy"],
                "precision": m["precision"], "recall": m["recall"],
            })
    return {"rows": rows, "exclusions": exclusions}
