"""SQL for the judge-mistake review queue (`copal label --suite dialogues`): append-only review
events in `dialogue_review_events` (label with an error type, undo, skip), reviewers' current
reviews, the queue's order, and the error-type counts the report reads.

The queue holds every turn where a judge attempt's prediction is wrong by the metrics' rules
(`IS_MISTAKE` in store/dialogue_browse_sql.py: a compliant turn with a wrong guideline, a
false alarm or no prediction, a violation turn not flagged), ordered by dialogue, judge,
attempt, turn: a reviewer reads each conversation forwards, one attempt after another, and
the walk follows the attempts' primary key, so finding the next open mistake stops at it
instead of judging and sorting the whole queue. Done means the reviewer's latest event on the
turn is a label or a skip; an undo reopens it. Each write is its own `BEGIN IMMEDIATE`
transaction, committed before the call returns.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from store.db import Database, StoreError, utcnow, write
from store.dialogue_browse_sql import IS_MISTAKE, JUDGED, KIND, MISTAKES, judged, prepare

# The error taxonomy (copal_tui.domain.dialogue.ERROR_TYPES, in its order; the migration's
# CHECK lists the same names; a test keeps the three equal).
ERROR_TYPES = ("scope_misattribution", "overly_strict", "reasoning_chain", "ignored_evidence",
               "non_equivalent", "other")
ALL = "all"


class ReviewKey(NamedTuple):
    """One judge attempt's prediction on one turn: what a review is about."""

    dialogue_id: str
    judge: str
    attempt: int
    turn_index: int


_SAME_KEY = ("{o}.dialogue_id = {i}.dialogue_id AND {o}.judge = {i}.judge AND "
             "{o}.attempt = {i}.attempt AND {o}.turn_index = {i}.turn_index")
# Event `e` is its reviewer's current review: a label not followed by a label or undo of theirs.
CURRENT = (
    "+e.action = 'label' AND NOT EXISTS (SELECT 1 FROM dialogue_review_events u WHERE "
    + _SAME_KEY.format(o="u", i="e") + " AND u.reviewer = e.reviewer AND u.id > e.id "
    "AND +u.action IN ('label', 'undo'))"
)
# Reviewer `:r` is done with the queue row (a, t): their latest event on it is label or skip.
DONE = (
    "EXISTS (SELECT 1 FROM dialogue_review_events e WHERE e.dialogue_id = a.dialogue_id "
    "AND e.judge = a.judge AND e.attempt = a.attempt AND e.turn_index = t.turn_index "
    "AND e.reviewer = :r AND e.action IN ('label', 'skip') AND NOT EXISTS ("
    "SELECT 1 FROM dialogue_review_events u WHERE " + _SAME_KEY.format(o="u", i="e")
    + " AND u.reviewer = :r AND u.id > e.id))"
)
_ORDER = "a.dialogue_id, a.judge, a.attempt, t.turn_index"
_POS = f"({_ORDER})"
_SCOPE = "(:j IS NULL OR a.judge = :j)"
_KEY_COLS = _ORDER  # a ReviewKey's fields, in the queue's order


def _key(row: Any) -> ReviewKey:
    return ReviewKey(str(row[0]), str(row[1]), int(row[2]), int(row[3]))


def _params(judge: str | None, reviewer: str | None = None,
            after: ReviewKey | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"j": judge, "r": reviewer}
    if after is not None:
        out.update(ad=after.dialogue_id, aj=after.judge, aa=after.attempt, at=after.turn_index)
    return out


def judges(db: Database) -> list[str]:
    """Judges with at least one scored (not failed) dialogue attempt."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT judge FROM dialogue_attempts WHERE failure IS NULL ORDER BY judge")]


# ------------------------------------------------------------------ the queue


def mistakes(db: Database, judge: str | None = None) -> list[ReviewKey]:
    """Every wrong prediction in the queue's order."""
    prepare(db)
    return [_key(r) for r in db.execute(
        f"SELECT {_KEY_COLS} {JUDGED} AND {_SCOPE} AND {IS_MISTAKE} ORDER BY {_ORDER}",
        _params(judge))]


def next_open(db: Database, reviewer: str, judge: str | None = None,
              after: ReviewKey | None = None) -> ReviewKey | None:
    """The first wrong prediction after `after` (from the start when None) that the reviewer
    has not labelled or skipped."""
    prepare(db)
    since = f" AND {_POS} > (:ad, :aj, :aa, :at)" if after is not None else ""
    row = db.execute(
        f"SELECT {_KEY_COLS} {JUDGED} AND {_SCOPE}{since} AND {IS_MISTAKE} AND NOT {DONE} "
        f"ORDER BY {_ORDER} LIMIT 1", _params(judge, reviewer, after)).fetchone()
    return None if row is None else _key(row)


def neighbour(db: Database, key: ReviewKey | None, forward: bool,
              judge: str | None = None) -> ReviewKey | None:
    """The next (previous) wrong prediction, done or not; from past the end (None) going back,
    the last one."""
    if key is None and forward:
        return None
    prepare(db)
    op, order = (">", "") if forward else ("<", " DESC")
    since = f" AND {_POS} {op} (:ad, :aj, :aa, :at)" if key is not None else ""
    order_by = ", ".join(f"{c}{order}" for c in _ORDER.split(", "))
    row = db.execute(f"SELECT {_KEY_COLS} {JUDGED} AND {_SCOPE}{since} AND {IS_MISTAKE} "
                     f"ORDER BY {order_by} LIMIT 1", _params(judge, None, key)).fetchone()
    return None if row is None else _key(row)


def queue_total(db: Database, judge: str | None = None) -> int:
    prepare(db)
    return int(db.execute(f"SELECT COUNT(*) {JUDGED} AND {_SCOPE} AND {IS_MISTAKE}",
                          _params(judge)).fetchone()[0])


def mine_count(db: Database, reviewer: str, judge: str | None = None) -> int:
    """Wrong predictions in the scope that hold a current review of the reviewer (walked from
    the reviewer's events, so it costs their reviews, not the queue)."""
    prepare(db)
    return int(db.execute(
        f"SELECT COUNT(*) {judged('dialogue_review_events e CROSS JOIN ')} "
        "AND e.reviewer = :r AND a.dialogue_id = e.dialogue_id AND a.judge = e.judge "
        f"AND a.attempt = e.attempt AND t.turn_index = e.turn_index AND {CURRENT} "
        f"AND {_SCOPE} AND {IS_MISTAKE}", _params(judge, reviewer)).fetchone()[0])


def mistake(db: Database, key: ReviewKey) -> dict[str, Any] | None:
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
    return None if row is None else dict(row)


# ------------------------------------------------------------------ events


def _append(db: Database, key: ReviewKey, reviewer: str, action: str,
            error_type: str | None = None, note: str | None = None) -> int:
    cur = db.execute(
        "INSERT INTO dialogue_review_events (dialogue_id, judge, attempt, turn_index, reviewer, "
        "action, error_type, note, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (*key, reviewer, action, error_type, note, utcnow()))
    return int(cur.lastrowid or 0)


def _require_mistake(db: Database, key: ReviewKey) -> None:
    row = mistake(db, key)
    if row is None or row["kind"] not in MISTAKES:
        raise StoreError(f"not a wrong prediction: {key.judge} attempt {key.attempt} on "
                         f"{key.dialogue_id} turn {key.turn_index}")


def label(db: Database, key: ReviewKey, reviewer: str, error_type: str,
          note: str | None = None) -> int:
    """Record the reviewer's error type for one wrong prediction (their new current review)."""
    if error_type not in ERROR_TYPES:
        raise StoreError(f"unknown error type {error_type!r} (one of {', '.join(ERROR_TYPES)})")
    with write(db):
        _require_mistake(db, key)
        return _append(db, key, reviewer, "label", error_type, note or None)


def skip(db: Database, key: ReviewKey, reviewer: str) -> int:
    with write(db):
        _require_mistake(db, key)
        return _append(db, key, reviewer, "skip")


def undo_last(db: Database, reviewer: str, judge: str | None = None) -> dict[str, Any] | None:
    """Retract the reviewer's most recent review that is still current (appends an undo; within
    one judge's reviews when `judge` is given); returns it, or None when there is none."""
    with write(db):
        row = db.execute(
            f"SELECT e.* FROM dialogue_review_events e WHERE e.reviewer = ? "
            f"AND (? IS NULL OR e.judge = ?) AND {CURRENT} ORDER BY e.id DESC LIMIT 1",
            (reviewer, judge, judge)).fetchone()
        if row is None:
            return None
        last = dict(row)
        _append(db, key_of(last), reviewer, "undo")
        return last


def key_of(row: dict[str, Any]) -> ReviewKey:
    return ReviewKey(row["dialogue_id"], row["judge"], int(row["attempt"]),
                     int(row["turn_index"]))


def current(db: Database, key: ReviewKey, reviewer: str) -> dict[str, Any] | None:
    """The reviewer's current review of one prediction, or None."""
    row = db.execute(
        "SELECT * FROM dialogue_review_events WHERE dialogue_id = ? AND judge = ? AND "
        "attempt = ? AND turn_index = ? AND reviewer = ? AND action IN ('label', 'undo') "
        "ORDER BY id DESC LIMIT 1", (*key, reviewer)).fetchone()
    return None if row is None or row["action"] != "label" else dict(row)


def reviews_of_turn(db: Database, dialogue_id: str, judge: str, attempt: int,
                    turn_index: int) -> list[dict[str, Any]]:
    """Every reviewer's current review of one prediction, by reviewer."""
    return [dict(r) for r in db.execute(
        "SELECT e.* FROM dialogue_review_events e WHERE e.dialogue_id = ? AND e.judge = ? "
        f"AND e.attempt = ? AND e.turn_index = ? AND {CURRENT} ORDER BY e.reviewer",
        (dialogue_id, judge, attempt, turn_index))]


# ------------------------------------------------------------------ for the report


def error_type_counts(db: Database, *, totals: bool = True) -> list[dict[str, Any]]:
    """Rows {judge, domain, error_type, count}: current reviews (one per reviewer and wrong
    prediction; reviews of predictions that are no longer wrong, e.g. after a re-imported
    attempt, are left out), for every judge and domain it judged and every error type, zeros
    included, in taxonomy order; with `totals`, a domain "all" row per judge and type too."""
    prepare(db)
    pairs = [(r[0], r[1]) for r in db.execute(
        "SELECT DISTINCT a.judge, d.domain FROM dialogue_attempts a JOIN dialogues d "
        "ON d.id = a.dialogue_id WHERE a.failure IS NULL ORDER BY a.judge, d.domain")]
    counts: dict[tuple[str, str, str], int] = {}
    for judge, domain, error_type, n in db.execute(
            "SELECT a.judge, (SELECT d.domain FROM dialogues d WHERE d.id = a.dialogue_id), "
            f"e.error_type, COUNT(*) {judged('dialogue_review_events e CROSS JOIN ')} "
            "AND a.dialogue_id = e.dialogue_id AND a.judge = e.judge AND a.attempt = e.attempt "
            f"AND t.turn_index = e.turn_index AND {CURRENT} AND {IS_MISTAKE} GROUP BY 1, 2, 3"):
        counts[(judge, domain, error_type)] = int(n)
    rows: list[dict[str, Any]] = []
    for judge in dict.fromkeys(j for j, _ in pairs):
        domains = [d for j, d in pairs if j == judge]
        for domain in [*domains, *([ALL] if totals else [])]:
            for et in ERROR_TYPES:
                n = sum(counts.get((judge, d, et), 0) for d in domains) if domain == ALL \
                    else counts.get((judge, domain, et), 0)
                rows.append({"judge": judge, "domain": domain, "error_type": et, "count": n})
    return rows

