"""The report's `dialogue_judging` section: CompliBench metrics per judge and domain.

Reads the stored truth and predictions (store.artifacts.dialogue_sql) and scores them with
`copal_tui.domain.dialogue`: per judge and domain (and `all`), every (conversation, attempt)
counted as its own judged file and the turns micro-averaged over all of them, as CompliBench's
evaluation script pools attempts. A failed attempt (the call failed, nothing usable) is not
scored but listed in `exclusions`; an attempt that left turns out is scored, the missing turns
counting as wrong. A judge whose every scored attempt gave verdicts without guidelines is
scored as a binary judge (verdict-only accuracy, precision and recall; no strict figure).
Which turns and attempts count and which judges are binary are the domain's rules
(`is_scored_turn`, `scored_attempt`, `judge_is_binary`), the ones the store's lists call.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from copal_tui.domain.dialogue import (
    Guideline,
    TurnPrediction,
    TurnTruth,
    is_scored_turn,
    judge_is_binary,
    score_files,
    scored_attempt,
)
from store.artifacts import dialogue_sql
from store.db import Database

ALL = "all"


def dialogue_judging(db: Database) -> dict[str, Any]:
    """{"rows": [...], "exclusions": [...]} (rows empty when no dialogue was judged)."""
    truth: dict[str, list[TurnTruth]] = defaultdict(list)
    domain_of: dict[str, str] = {}
    for t in dialogue_sql.truth_turns(db):
        domain_of[t.dialogue_id] = t.domain
        truth[t.dialogue_id].append(TurnTruth(t.turn_index, Guideline.of(t.category, t.key, t.phase),
                                              bool(t.violation), t.role))
    preds: dict[tuple[str, int, str], list[TurnPrediction]] = defaultdict(list)
    for p in dialogue_sql.predictions(db):
        g = None if p.category is None and p.key is None else \
            Guideline.of(p.category, p.key, p.phase)
        preds[(p.judge, p.attempt, p.dialogue_id)].append(
            TurnPrediction(p.turn_index, g, bool(p.violation)))
    # judge -> attempt -> dialogues judged in it; each judge's attempts (binary, failure)
    # for the domain's binary rule; failures
    scored: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    facts: dict[str, list[tuple[bool, str | None]]] = defaultdict(list)
    exclusions: list[dict[str, Any]] = []
    for a in dialogue_sql.attempts(db):
        facts[a.judge].append((bool(a.binary_verdicts), a.failure))
        if not scored_attempt(a.failure):
            exclusions.append({"judge": a.judge, "dialogue": a.dialogue_id, "attempt": a.attempt,
                               "reason": a.failure})
            continue
        scored[a.judge][a.attempt].append(a.dialogue_id)
    rows: list[dict[str, Any]] = []
    for judge in sorted(scored):
        is_binary = judge_is_binary(facts[judge])
        domains = sorted({domain_of[d] for ds in scored[judge].values() for d in ds})
        for domain in [*domains, ALL]:
            files = [(truth[d], preds.get((judge, attempt, d), []))
                     for attempt in sorted(scored[judge]) for d in scored[judge][attempt]
                     if domain == ALL or domain_of[d] == domain]
            if not files:
                continue
            convs = {d for attempt in scored[judge] for d in scored[judge][attempt]
                     if domain == ALL or domain_of[d] == domain}
            attempts = {a for a in scored[judge]
                        if any(domain == ALL or domain_of[d] == domain
                               for d in scored[judge][a])}
            m = score_files(files, binary=is_binary)
            rows.append({
                "judge": judge, "domain": domain, "conversations": len(convs),
                "attempts": len(attempts), "files": m.conversations, "binary": is_binary,
                # scored turns of the conversations judged, not per attempt
                "compliant_turns": sum(1 for d in convs for t in truth[d]
                                       if is_scored_turn(t.role, t.guideline)
                                       and not t.violation),
                "violation_turns": sum(1 for d in convs for t in truth[d]
                                       if is_scored_turn(t.role, t.guideline) and t.violation),
                "compliant_turn_accuracy": m.compliant_turn_accuracy,
                "violation_detection_accuracy": m.violation_detection_accuracy,
                "strict_violation_detection_accuracy": m.strict_violation_detection_accuracy,
                "conversation_accuracy": m.conversation_accuracy,
                "precision": m.precision, "recall": m.recall,
            })
    return {"rows": rows, "exclusions": exclusions}
