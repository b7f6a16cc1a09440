"""A small judged-dialogue store for the dialogue TUI and review-queue tests, written with the
store's own inserts (store.artifacts.dialogue; no import files, no pipeline).

Dialogues: `airline/d1` (turns 0-7: C1 greet, C2 Refund P1, C2 Refund P2 violation with
evidence, C3 angry; a user turn with hostile markup), `airline/d1-v1` (a variant of d1 with no
violation) and `retail/d3` (C2 return P1, C3 vip violation). Judges:

- `judge-a` (names guidelines, keys as the document writes them):
  attempt 1 on d1: t3 wrong phase (wrong_guideline), t5 not flagged (missed_violation), t7
  right; attempt 2 on d1: t3 right, t5 flagged, t7 flagged (false_alarm); attempt 1 on d1-v1:
  all right; attempt 1 on d3: t1 right, t3 flagged under C2 (flagged_elsewhere, not a
  mistake); attempt 2 on d3 failed (not scored).
- `judge-b` (binary: verdicts only) attempt 1 on d1: t3 not flagged (right, guideline not
  compared), t5 not flagged (missed_violation), t7 left out (no_prediction).

So the queue, in order (dialogue, judge, attempt, turn), is MISTAKES below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from store.annotation.dialogue_reviews import ReviewKey
from store.artifacts import dialogue
from store.db import connect, write

HOSTILE = ("[bold red]not markup[/bold red] \x1b[31mred?\x1b[0m \x1b]0;pwned\x07title "
           "\u202eevil\u202c end")
D1, V1, D3 = "airline/d1", "airline/d1-v1", "retail/d3"
EVIDENCE = "The reply never quotes the refund policy."
MODIFIED = "Skip quoting the refund policy."
GUIDELINES = [
    {"category": 1, "key": "greet", "phase": None, "text": "Greet the customer by name."},
    {"category": 2, "key": "Refund", "phase": 1, "text": "Ask for the booking reference."},
    {"category": 2, "key": "Refund", "phase": 2, "text": "Quote the refund policy."},
    {"category": 3, "key": "angry", "phase": None, "text": "Offer a supervisor."},
]
RETAIL = [
    {"category": 2, "key": "return", "phase": 1, "text": "Ask for the order number."},
    {"category": 3, "key": "vip", "phase": None, "text": "Thank loyal customers."},
]


def _t(i: int, role: str, content: str, cat: int | None = None, key: str | None = None,
       phase: int | None = None, violation: bool = False, **extra: Any) -> dict[str, Any]:
    return {"turn_index": i, "role": role, "content": content, "category": cat, "key": key,
            "phase": phase, "violation": violation, **extra}


D1_TURNS = [
    _t(0, "user", "Hi, I want a refund for my flight."),
    _t(1, "assistant", "Hello Sam, happy to help.", 1, "greet"),
    _t(2, "user", "Booking ABC123."),
    _t(3, "assistant", "Thanks, what is your booking reference?", 2, "Refund", 1),
    _t(4, "user", "I said ABC123. What is the policy?"),
    _t(5, "assistant", "Your refund is on its way.", 2, "Refund", 2, True,
       guideline_text=MODIFIED, evidence=EVIDENCE),
    _t(6, "user", HOSTILE),
    _t(7, "assistant", "I can put you through to a supervisor.", 3, "angry"),
]
V1_TURNS = [
    _t(0, "user", "Refund please."),
    _t(1, "assistant", "What is your booking reference?", 2, "Refund", 1),
]
D3_TURNS = [
    _t(0, "user", "Where is my order?"),
    _t(1, "assistant", "Could you give me the order number?", 2, "return", 1),
    _t(2, "user", "I have shopped here for ten years."),
    _t(3, "assistant", "Noted.", 3, "vip", violation=True, guideline_text="Ignore loyalty.",
       evidence="No thanks given."),
]


def _p(i: int, cat: int | None, key: str | None, phase: int | None, violation: bool,
       reason: str = "") -> dict[str, Any]:
    return {"turn_index": i, "category": cat, "key": key, "phase": phase,
            "violation": violation, "reason": reason or f"reason {i}"}


ATTEMPTS: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    ({"dialogue_id": D1, "judge": "judge-a", "attempt": 1}, [
        _p(1, 1, "greet", None, False), _p(3, 2, "Refund", 2, False, "looks like phase two"),
        _p(5, 2, "Refund", 2, False, "the refund is confirmed: compliant"),
        _p(7, 3, "angry", None, False)]),
    ({"dialogue_id": D1, "judge": "judge-a", "attempt": 2}, [
        _p(1, 1, "greet", None, False), _p(3, 2, "Refund", 1, False),
        _p(5, 2, "Refund", 2, True, "no policy quoted: violation"),
        _p(7, 3, "angry", None, True, "never states the wait time")]),
    ({"dialogue_id": V1, "judge": "judge-a", "attempt": 1}, [_p(1, 2, "Refund", 1, False)]),
    ({"dialogue_id": D3, "judge": "judge-a", "attempt": 1}, [
        _p(1, 2, "return", 1, False), _p(3, 2, "return", 1, True)]),
    ({"dialogue_id": D3, "judge": "judge-a", "attempt": 2, "failure": "timeout"}, []),
    ({"dialogue_id": D1, "judge": "judge-b", "attempt": 1, "binary": True}, [
        _p(1, None, None, None, False), _p(3, None, None, None, False),
        _p(5, None, None, None, False)]),
]
MISTAKES = [
    (ReviewKey(D1, "judge-a", 1, 3), "wrong_guideline"),
    (ReviewKey(D1, "judge-a", 1, 5), "missed_violation"),
    (ReviewKey(D1, "judge-a", 2, 7), "false_alarm"),
    (ReviewKey(D1, "judge-b", 1, 5), "missed_violation"),
    (ReviewKey(D1, "judge-b", 1, 7), "no_prediction"),
]


def fill(db_path: Path) -> None:
    db = connect(db_path)
    try:
        with write(db):
            dialogue.insert_dialogue(db, {"id": D1, "domain": "airline"}, GUIDELINES,
                                         D1_TURNS)
            dialogue.insert_dialogue(db, {"id": V1, "domain": "airline", "variant_of": D1},
                                         GUIDELINES, V1_TURNS)
            dialogue.insert_dialogue(db, {"id": D3, "domain": "retail"}, RETAIL, D3_TURNS)
            for attempt, preds in ATTEMPTS:
                dialogue.replace_attempt(db, {"source": "import", **attempt}, preds)
    finally:
        db.close()


def build_dialogue_db(tmp_path: Path) -> Path:
    db_path = tmp_path / "dialogues.db"
    result = CliRunner().invoke(main, ["--db", str(db_path), "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fill(db_path)
    return db_path


def rows(db_path: Path, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    db = connect(db_path)
    try:
        return [dict(r) for r in db.execute(sql, params)]
    finally:
        db.close()


def events(db_path: Path, reviewer: str) -> list[tuple[Any, ...]]:
    """(dialogue, judge, attempt, turn, action, error_type, note) of the reviewer's events."""
    return [(r["d"], r["j"], r["a"], r["t"], r["action"], r["error_type"], r["note"])
            for r in rows(db_path,
                          "SELECT json_extract(subject, '$[0]') AS d, "
                          "json_extract(subject, '$[1]') AS j, json_extract(subject, '$[2]') AS a, "
                          "json_extract(subject, '$[3]') AS t, action, "
                          "json_extract(payload, '$.error_type') AS error_type, "
                          "json_extract(payload, '$.note') AS note FROM annotations "
                          "WHERE suite = 'dialogue' AND annotator = ? ORDER BY id", (reviewer,))]
