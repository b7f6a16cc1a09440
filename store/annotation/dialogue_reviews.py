"""SQL for judge-mistake subjects (`copal label --suite dialogue`): which predictions are wrong
and what the reviewer is shown for one, reviewers' current reviews of a turn, and the
error-type counts the report reads. The reviews themselves are events of the annotation log
(store/annotation/annotations.py, suite "dialogue", subject = the JSON array [dialogue, judge, attempt,
turn], written and read by copal_tui.domain.annotation.subjects); the queue is the one every
suite shares (copal_tui.services.annotation.queue).

The wrong predictions are every turn where a judge attempt's prediction is wrong by the
metrics' rules (`IS_MISTAKE` in store/browse/dialogue.py: a compliant turn with a wrong
guideline, a false alarm or no prediction, a violation turn not flagged), ordered by dialogue,
judge, attempt, turn: a reviewer reads each conversation forwards, one attempt after another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from copal_tui.domain import dialogue as dialogue_domain
from copal_tui.domain.annotation.subjects import dialogue_parts, dialogue_subject
from copal_tui.domain.report_rows import ErrorTypeCount
from store.annotation import annotations as log
from store.annotation.campaigns import Candidate
from store.browse.dialogue import IS_MISTAKE, JUDGED, KIND, MISTAKES, judged, prepare
from store.db import Database

# The error taxonomy, in the domain's order (the report's rows follow it).
ERROR_TYPES = tuple(dialogue_domain.ERROR_TYPES)
ALL = "all"


class ReviewKey(NamedTuple):
    """One judge attempt's prediction on one turn: what a review is about."""

    dialogue_id: str
    judge: str
    attempt: int
    turn_index: int


def subject_of(key: ReviewKey) -> str:
    """The key as the annotation log's subject (as the domain writes it)."""
    return dialogue_subject(key.dialogue_id, key.judge, key.attempt, key.turn_index)


def key_of(subject: str) -> ReviewKey:
    return ReviewKey(*dialogue_parts(subject))


# Event `e` (an annotation of suite dialogue) is about attempt `a`'s prediction on turn `t`.
_ON_TURN = ("a.dialogue_id = json_extract(e.subject, '$[0]') AND a.judge = "
            "json_extract(e.subject, '$[1]') AND a.attempt = json_extract(e.subject, '$[2]') "
            "AND t.turn_index = json_extract(e.subject, '$[3]')")
_ORDER = "a.dialogue_id, a.judge, a.attempt, t.turn_index"
_SCOPE = "(:j IS NULL OR a.judge = :j)"
_KEY_COLS = _ORDER  # a ReviewKey's fields, in the queue's order


@dataclass(frozen=True, slots=True)
class Mistake:
    """One judge attempt's prediction on one turn with the turn's truth: the key, the turn
    (content, truth and the guideline's text and evidence), the prediction (`p_*`, None when
    `predicted` is 0), whether the attempt's verdicts were binary, the verdict `kind` ('right',
    'flagged_elsewhere' or one of MISTAKES) and the dialogue's domain. Field names are the
    columns' (`dataclasses.asdict` is what a review's content hash covers)."""

    dialogue_id: str
    judge: str
    attempt: int
    turn_index: int
    content: str
    category: int | None
    key: str | None
    phase: int | None
    violation: int
    guideline_text: str | None
    evidence: str | None
    predicted: int
    p_category: int | None
    p_key: str | None
    p_phase: int | None
    p_violation: int | None
    p_reason: str | None
    binary_judge: int | None
    kind: str
    domain: str


def _key(row: Any) -> ReviewKey:
    return ReviewKey(str(row[0]), str(row[1]), int(row[2]), int(row[3]))


def judges(db: Database) -> list[str]:
    """Judges with at least one scored dialogue attempt (the domain's `scored_attempt`)."""
    prepare(db)
    return [r[0] for r in db.execute(
        "SELECT DISTINCT judge FROM dialogue_attempts WHERE copal_scored_attempt(failure) "
        "ORDER BY judge")]


# ------------------------------------------------------------------ the wrong predictions


def mistakes(db: Database, judge: str | None = None) -> list[ReviewKey]:
    """Every wrong prediction (of one judge) in the queue's order."""
    prepare(db)
    return [_key(r) for r in db.execute(
        f"SELECT {_KEY_COLS} {JUDGED} AND {_SCOPE} AND {IS_MISTAKE} ORDER BY {_ORDER}",
        {"j": judge})]


def candidates(db: Database, judge: str | None = None) -> list[Candidate]:
    """The wrong predictions (of one judge) in the queue's order, each in its stratum
    "judge|kind of mistake"."""
    prepare(db)
    return [Candidate(subject_of(_key(r)), f"{r[1]}|{r[4]}") for r in db.execute(
        f"SELECT {_KEY_COLS}, {KIND} {JUDGED} AND {_SCOPE} AND {IS_MISTAKE} ORDER BY {_ORDER}",
        {"j": judge})]


def queue_total(db: Database, judge: str | None = None) -> int:
    prepare(db)
    return int(db.execute(f"SELECT COUNT(*) {JUDGED} AND {_SCOPE} AND {IS_MISTAKE}",
                          {"j": judge}).fetchone()[0])


def mistake(db: Database, key: ReviewKey) -> Mistake | None:
    """The turn's truth, the prediction (`p_*`, NULL when none) and `kind`; None when the key
    is not a scored turn of a scored attempt."""
    prepare(db)
    row = db.execute(
        f"SELECT {_KEY_COLS}, t.content, t.category, t.key, t.phase, t.violation, "
        "t.guideline_text, t.evidence, p.turn_index IS NOT NULL AS predicted, "
        "p.category AS p_category, p.key AS p_key, p.phase AS p_phase, "
        "p.violation AS p_violation, p.reason AS p_reason, bj.binary_judge, "
        f"{KIND} AS kind, (SELECT domain FROM dialogues d WHERE d.id = a.dialogue_id) AS domain "
        f"{JUDGED} AND a.dialogue_id = ? AND a.judge = ? AND a.attempt = ? "
        "AND t.turn_index = ?", tuple(key)).fetchone()
    return None if row is None else Mistake(*row)


def is_mistake(db: Database, key: ReviewKey) -> bool:
    row = mistake(db, key)
    return row is not None and row.kind in MISTAKES


def reviews_of_turn(db: Database, dialogue_id: str, judge: str, attempt: int,
                    turn_index: int) -> list[log.Annotation]:
    """Every reviewer's current review of one prediction, by reviewer."""
    return log.labels_of(db, "dialogue", subject_of(
        ReviewKey(dialogue_id, judge, attempt, turn_index)))


# ------------------------------------------------------------------ for the report


def error_type_rows(db: Database, *, totals: bool = True) -> list[ErrorTypeCount]:
    """Counts of current reviews (one per reviewer and wrong
    prediction; reviews of predictions that are no longer wrong, e.g. after a re-imported
    attempt, are left out), for every judge and domain it judged and every error type, zeros
    included, in taxonomy order; with `totals`, a domain "all" row per judge and type too."""
    prepare(db)
    pairs = [(r[0], r[1]) for r in db.execute(
        "SELECT DISTINCT a.judge, d.domain FROM dialogue_attempts a JOIN dialogues d "
        "ON d.id = a.dialogue_id WHERE copal_scored_attempt(a.failure) ORDER BY a.judge, d.domain")]
    counts: dict[tuple[str, str, str], int] = {}
    for judge, domain, error_type, n in db.execute(
            "SELECT a.judge, (SELECT d.domain FROM dialogues d WHERE d.id = a.dialogue_id), "
            "json_extract(e.payload, '$.error_type'), COUNT(*) "
            f"{judged('annotations e CROSS JOIN ')} AND e.suite = 'dialogue' "
            f"AND {log.CURRENT} AND {_ON_TURN} AND {IS_MISTAKE} GROUP BY 1, 2, 3"):
        counts[(judge, domain, error_type)] = int(n)
    rows: list[ErrorTypeCount] = []
    for judge in dict.fromkeys(j for j, _ in pairs):
        domains = [d for j, d in pairs if j == judge]
        for domain in [*domains, *([ALL] if totals else [])]:
            for et in ERROR_TYPES:
                n = sum(counts.get((judge, d, et), 0) for d in domains) if domain == ALL \
                    else counts.get((judge, domain, et), 0)
                rows.append(ErrorTypeCount(judge, domain, et, n))
    return rows

