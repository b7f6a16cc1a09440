"""The dialogue lists (the SQL behind the dialogue screen, the list's wrong counts and the review
queue) and the report's `dialogue_judging` metrics agree on which turns are scored, which
attempts count and which judges are binary, on a dialogue where each rule matters: a tagged
user turn, an untagged assistant turn and one with an empty key (none scored), a failed attempt
(not scored, its judge stays binary), and a judge with one binary and one guideline-naming
attempt (not binary). Every expected value below is worked out by hand in the comments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from copal_tui.services.dialogues import attempt_detail, wrong_counts
from store.annotation import dialogue_reviews
from store.artifacts import dialogue
from store.db import connect, write

D = "agree/d1"
GUIDELINES = [
    {"category": 2, "key": "Refund", "phase": 1, "text": "Ask for the reference."},
    {"category": 2, "key": "Refund", "phase": 2, "text": "Quote the policy."},
    {"category": 3, "key": "angry", "phase": None, "text": "Offer a supervisor."},
]


def turn(i: int, role: str, cat: int | None = None, key: str | None = None,
         phase: int | None = None, violation: bool = False) -> dict[str, Any]:
    return {"turn_index": i, "role": role, "content": f"turn {i}", "category": cat,
            "key": key, "phase": phase, "violation": violation}


# Scored: 1 (compliant), 3 (violation), 9 (compliant). Not scored: 0 and 2 (user turns, one
# of them tagged), 5 (untagged), 7 (empty key).
TURNS = [turn(0, "user"), turn(1, "assistant", 2, "Refund", 1), turn(2, "user", 2, "Refund", 1),
         turn(3, "assistant", 2, "Refund", 2, True), turn(5, "assistant"),
         turn(7, "assistant", 3, ""), turn(9, "assistant", 3, "angry")]


def pred(i: int, cat: int | None, key: str | None, phase: int | None,
         violation: bool) -> dict[str, Any]:
    return {"turn_index": i, "category": cat, "key": key, "phase": phase,
            "violation": violation, "reason": f"r{i}"}


def verdict(i: int, violation: bool) -> dict[str, Any]:
    return pred(i, None, None, None, violation)


ATTEMPTS = [
    # named: 1 right, 3 right, 9 a false alarm; its flags on 5 and 7 are not scored.
    ({"judge": "named", "attempt": 1},
     [pred(1, 2, "Refund", 1, False), pred(3, 2, "Refund", 2, True), verdict(5, True),
      pred(7, 3, "", None, True), pred(9, 3, "angry", None, True)]),
    # mixed is not binary (attempt 2 names guidelines), so its binary attempt 1 is judged on
    # guidelines too: 1 wrong guideline (none named), 3 flagged elsewhere, 9 wrong guideline.
    ({"judge": "mixed", "attempt": 1, "binary": True},
     [verdict(1, False), verdict(3, True), verdict(9, False)]),
    # mixed #2: 1 wrong guideline (phase 2), 3 flagged under another guideline, 9 missing.
    ({"judge": "mixed", "attempt": 2},
     [pred(1, 2, "Refund", 2, False), pred(3, 3, "angry", None, True)]),
    # binary: 1 right, 3 a missed violation, 9 a false alarm.
    ({"judge": "binary", "attempt": 1, "binary": True},
     [verdict(1, False), verdict(3, False), verdict(9, True)]),
    # A failed attempt naming guidelines: not scored, and the judge stays binary.
    ({"judge": "binary", "attempt": 2, "failure": "timeout"},
     [pred(1, 2, "Refund", 1, False)]),
]


@pytest.fixture
def judged(initialised):
    db = connect(initialised)
    with write(db):
        dialogue.insert_dialogue(db, {"id": D, "domain": "agree"}, GUIDELINES, TURNS)
        for a, preds in ATTEMPTS:
            dialogue.replace_attempt(db, {"dialogue_id": D, "source": "import", **a}, preds)
    yield db
    db.close()


def test_the_lists_judge_only_scored_turns_of_scored_attempts(judged):
    assert attempt_detail(judged, D, "named", 1).kinds == {
        1: "right", 3: "right", 9: "false_alarm"}
    assert attempt_detail(judged, D, "mixed", 1).kinds == {
        1: "wrong_guideline", 3: "flagged_elsewhere", 9: "wrong_guideline"}
    assert attempt_detail(judged, D, "mixed", 2).kinds == {
        1: "wrong_guideline", 3: "flagged_elsewhere", 9: "no_prediction"}
    assert attempt_detail(judged, D, "binary", 1).kinds == {
        1: "right", 3: "missed_violation", 9: "false_alarm"}
    assert attempt_detail(judged, D, "binary", 2).kinds == {}  # failed: not scored
    # The review queue reads the same rows: a turn that is not scored is no mistake.
    assert dialogue_reviews.mistake(judged, dialogue_reviews.ReviewKey(D, "named", 1, 7)) \
        is None
    named = dialogue_reviews.mistake(judged, dialogue_reviews.ReviewKey(D, "named", 1, 9))
    binary = dialogue_reviews.mistake(judged, dialogue_reviews.ReviewKey(D, "binary", 1, 9))
    assert named is not None and named.binary_judge == 0
    assert binary is not None and binary.binary_judge == 1


def test_the_lists_and_the_report_count_the_same_mistakes(cli, judged):
    doc = json.loads(cli("report", "--json").stdout)
    rows = {r["judge"]: r for r in doc["dialogue_judging"] if r["domain"] == "all"}
    assert doc["dialogue_judging"] and set(rows) == {"named", "mixed", "binary"}
    # The failed attempt is an exclusion of the report, not a score.
    assert [(e["what"], e["reason"], e["count"]) for e in doc["exclusions"]
            if e["section"] == "dialogue_judging"] == [
        ("failed attempts of binary", "timeout", 1)]
    # Two scored compliant turns (1, 9) and one violation turn (3) in the dialogue.
    assert {j: (r["compliant_turns"], r["violation_turns"]) for j, r in rows.items()} == {
        "named": (2, 1), "mixed": (2, 1), "binary": (2, 1)}
    assert {j: (r["attempts"], r["files"], r["binary"]) for j, r in rows.items()} == {
        "named": (1, 1, False), "mixed": (2, 2, False), "binary": (1, 1, True)}
    # named: compliant 1/2 right, the violation flagged under its guideline, precision 1/2.
    assert (rows["named"]["compliant_turn_accuracy"], rows["named"]["violation_detection_accuracy"],
            rows["named"]["strict_violation_detection_accuracy"], rows["named"]["precision"]) \
        == (0.5, 1.0, 1.0, 0.5)
    # mixed: 0/4 compliant right over its two files, 2/2 flagged, none under the guideline.
    assert (rows["mixed"]["compliant_turn_accuracy"], rows["mixed"]["violation_detection_accuracy"],
            rows["mixed"]["strict_violation_detection_accuracy"]) == (0.0, 1.0, 0.0)
    # binary: 1/2 compliant right, the violation missed, no strict figure.
    assert (rows["binary"]["compliant_turn_accuracy"],
            rows["binary"]["violation_detection_accuracy"],
            rows["binary"]["strict_violation_detection_accuracy"]) == (0.5, 0.0, None)
    # Wrong predictions by the report's counts, (compliant - right) + (violations - flagged):
    # named (2-1)+(1-1) = 1, mixed (4-0)+(2-2) = 4, binary (2-1)+(1-0) = 2; the lists agree.
    assert {j: dialogue_reviews.queue_total(judged, j) for j in rows} == {
        "named": 1, "mixed": 4, "binary": 2}
    assert wrong_counts(judged, [D]) == {D: 7}
