"""SQL for deleting a dialogue judge's stored attempts (`copal delete-attempts`), so that a re-run
of `dialogue_judge` asks that judge again: which attempts a selection covers, and the deletion.

An attempt's predictions go with it (`ON DELETE CASCADE`). Reviews of its predictions live in
the annotation log (suite `dialogue`, subject [dialogue, judge, attempt, turn]), which is never
deleted from here: the service refuses to delete attempts that have reviews, since the next
answer would take over their subjects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from store.db import Database


@dataclass(frozen=True)
class AttemptSelection:
    """What a selection (one judge; some domains or dialogues, else all) covers."""

    attempts: int
    dialogues: int
    predictions: int
    reviews: int  # annotation-log events about the selected attempts' predictions


def attempt_judges(db: Database) -> list[str]:
    """Every judge with a stored attempt (failed ones too), by name: a walk of the judge
    index."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT judge FROM dialogue_attempts ORDER BY judge")]


def _where(judge: str, domains: Sequence[str],
           dialogue_ids: Sequence[str]) -> tuple[str, list[str]]:
    """The WHERE clause (over `dialogue_attempts a`) of a selection, and its parameters."""
    sql, params = ["a.judge = ?"], [judge]
    if domains:
        sql.append("a.dialogue_id IN (SELECT id FROM dialogues WHERE domain IN "
                   f"({', '.join('?' * len(domains))}))")
        params += domains
    if dialogue_ids:
        sql.append(f"a.dialogue_id IN ({', '.join('?' * len(dialogue_ids))})")
        params += dialogue_ids
    return " AND ".join(sql), params


def selection(db: Database, judge: str, domains: Sequence[str] = (),
              dialogue_ids: Sequence[str] = ()) -> AttemptSelection:
    where, params = _where(judge, domains, dialogue_ids)
    attempts, dialogues = db.execute(
        f"SELECT COUNT(*), COUNT(DISTINCT a.dialogue_id) FROM dialogue_attempts a "
        f"WHERE {where}", params).fetchone()
    predictions = db.execute(
        f"SELECT COUNT(*) FROM dialogue_predictions p JOIN dialogue_attempts a USING "
        f"(dialogue_id, judge, attempt) WHERE {where}", params).fetchone()[0]
    # The log's dialogue subjects are JSON arrays: matched on their parts, as the review
    # queue reads them (store.annotation.dialogue_reviews).
    reviews = db.execute(
        f"SELECT COUNT(*) FROM annotations e JOIN dialogue_attempts a "
        f"ON a.dialogue_id = json_extract(e.subject, '$[0]') "
        f"AND a.judge = json_extract(e.subject, '$[1]') "
        f"AND a.attempt = json_extract(e.subject, '$[2]') "
        f"WHERE e.suite = 'dialogue' AND {where}", params).fetchone()[0]
    return AttemptSelection(attempts, dialogues, predictions, reviews)


def delete(db: Database, judge: str, domains: Sequence[str] = (),
           dialogue_ids: Sequence[str] = ()) -> int:
    """Delete the selected attempts (their predictions with them); how many were deleted."""
    where, params = _where(judge, domains, dialogue_ids)
    cursor = db.execute(
        f"DELETE FROM dialogue_attempts WHERE rowid IN "
        f"(SELECT a.rowid FROM dialogue_attempts a WHERE {where})", params)
    return int(cursor.rowcount)
