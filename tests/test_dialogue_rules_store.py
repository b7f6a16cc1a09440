"""How the store judges one prediction on one dialogue turn (`KIND`, the SQL function the
dialogue screen, the list's wrong counts and the review queue read), case by case against
CompliBench's rules as the domain states them: a guideline matches on category, key as written
and phase (-1 when none); on a violation turn only the flag counts; a judge is binary when
every scored attempt of it is; untagged turns and failed attempts are not scored. Every
expected kind below is written out by hand."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.services.dialogues import attempt_detail, wrong_counts
from store.annotation import dialogue_reviews
from store.artifacts import dialogue
from store.db import connect, write

D = "rules/d1"
GUIDELINES = [
    {"category": 1, "key": "greet", "phase": None, "text": "Greet."},
    {"category": 2, "key": "Refund", "phase": 1, "text": "Ask for the reference."},
    {"category": 2, "key": "Refund", "phase": 2, "text": "Quote the policy."},
    {"category": 3, "key": "angry", "phase": None, "text": "Offer a supervisor."},
]


def turn(i: int, cat: int | None, key: str | None, phase: int | None,
         violation: bool = False) -> dict[str, Any]:
    return {"turn_index": i, "role": "assistant", "content": f"turn {i}", "category": cat,
            "key": key, "phase": phase, "violation": violation}


TURNS = [
    {"turn_index": 0, "role": "user", "content": "hello"},
    turn(1, 2, "Refund", 1), turn(3, 2, "Refund", 1), turn(5, 3, "angry", None),
    turn(7, 2, "Refund", 1), turn(9, 2, "Refund", 1), turn(11, 2, "Refund", 1),
    turn(13, 2, "Refund", 2, True), turn(15, 2, "Refund", 2, True),
    turn(17, 2, "Refund", 2, True), turn(19, 1, "greet", None), turn(21, 2, "Refund", 1),
    turn(23, None, None, None),  # untagged: not scored
]


def pred(i: int, cat: int | None, key: str | None, phase: int | None,
         violation: bool) -> dict[str, Any]:
    return {"turn_index": i, "category": cat, "key": key, "phase": phase,
            "violation": violation, "reason": f"r{i}"}


# (turn, prediction or None, expected kind) for a judge that names guidelines.
NAMED = [
    (1, pred(1, 2, "Refund", 1, False), "right"),
    (3, pred(3, 2, "Refund", 2, False), "wrong_guideline"),  # wrong phase
    (5, pred(5, 3, "angry", 1, False), "wrong_guideline"),  # a phase named for Category 3
    (7, pred(7, 2, "refund", 1, False), "wrong_guideline"),  # keys compare as written
    (9, pred(9, 2, "Refund", 1, True), "false_alarm"),
    (11, None, "no_prediction"),
    (13, pred(13, 2, "Refund", 2, True), "right"),
    (15, pred(15, 3, "angry", None, True), "flagged_elsewhere"),
    (17, pred(17, 2, "Refund", 2, False), "missed_violation"),
    (19, pred(19, 1, "greet", None, False), "right"),  # Category 1 is scored too
    (21, pred(21, None, None, None, False), "wrong_guideline"),  # names no guideline
]
# The same turns for a binary judge (verdicts only): guidelines are never compared.
BINARY = [
    (3, pred(3, None, None, None, False), "right"),
    (9, pred(9, None, None, None, True), "false_alarm"),
    (11, None, "no_prediction"),
    (15, pred(15, None, None, None, True), "right"),
    (17, pred(17, None, None, None, False), "missed_violation"),
]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "rules.db"
    result = CliRunner().invoke(main, ["--db", str(path), "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    conn = connect(path)
    attempts = [
        ({"judge": "named", "attempt": 1}, [p for _, p, _ in NAMED if p]),
        ({"judge": "binary", "attempt": 1, "binary": True}, [p for _, p, _ in BINARY if p]),
        # One binary attempt does not make a judge binary when another names guidelines.
        ({"judge": "mixed", "attempt": 1, "binary": True}, [pred(3, None, None, None, False)]),
        ({"judge": "mixed", "attempt": 2}, [pred(3, 2, "Refund", 1, False)]),
        # A failed attempt names guidelines, yet the judge stays binary: it is not scored.
        ({"judge": "binary", "attempt": 2, "failure": "timeout"}, [pred(3, 2, "x", 1, False)]),
    ]
    with write(conn):
        dialogue.insert_dialogue(conn, {"id": D, "domain": "rules"}, GUIDELINES, TURNS)
        for a, preds in attempts:
            dialogue.replace_attempt(conn, {"dialogue_id": D, "source": "import", **a},
                                         preds)
    yield conn
    conn.close()


def test_each_prediction_gets_its_kind(db):
    named = attempt_detail(db, D, "named", 1).kinds
    assert named == {i: kind for i, _, kind in NAMED}  # turn 23 (untagged) is absent
    binary = attempt_detail(db, D, "binary", 1).kinds
    assert binary == {i: kind for i, _, kind in BINARY} | {
        # The turns it left out: no prediction (compliant) or a missed violation.
        1: "no_prediction", 5: "no_prediction", 7: "no_prediction", 13: "missed_violation",
        19: "no_prediction", 21: "no_prediction"}


def test_a_judge_is_binary_only_when_every_scored_attempt_is(db):
    assert attempt_detail(db, D, "mixed", 1).kinds[3] == "wrong_guideline"
    assert attempt_detail(db, D, "mixed", 2).kinds[3] == "right"
    assert attempt_detail(db, D, "binary", 2).kinds == {}  # failed: not scored


def test_the_list_and_the_queue_count_the_same_mistakes(db):
    # named 7 (turns 3 5 7 9 11 17 21), binary 9 (all but 3 and 15), mixed #1 all 11 of
    # its scored turns, mixed #2 all but turn 3.
    assert wrong_counts(db, [D]) == {D: 7 + 9 + 11 + 10}
    assert dialogue_reviews.queue_total(db) == 37
    assert [k.turn_index for k in dialogue_reviews.mistakes(db, "named")] == [
        3, 5, 7, 9, 11, 17, 21]
