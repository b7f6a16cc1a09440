"""Deleting a dialogue judge's stored attempts (`copal delete-attempts`), so that `copal run
dialogue_judge` asks that judge again: attempts read by an earlier copal's rules, or judged
before a change to the guidelines or the judge's setting, since a re-run skips stored attempts.

The store's SQL is `store.artifacts.dialogue_attempts`. The deletion re-reads its selection
under the write lock and refuses, deleting nothing, when human reviews are about the attempts:
the annotation log is never deleted from, and the next answers would take over their subjects.
"""

from __future__ import annotations

from collections.abc import Sequence

from copal_tui.services import reading
from store.artifacts import dialogue_attempts as sql
from store.artifacts.dialogue_attempts import AttemptSelection
from store.db import Database, write

__all__ = ["AttemptSelection", "Reviewed", "attempt_judges", "delete", "selection"]


class Reviewed(Exception):
    """The selected attempts have reviews in the annotation log; nothing was deleted."""

    def __init__(self, found: AttemptSelection) -> None:
        super().__init__(f"{found.reviews} review event(s) in the annotation log are about "
                         "these attempts' predictions, and the next answers would take over "
                         "their subjects")
        self.found = found


def attempt_judges(db: Database) -> list[str]:
    """Every judge with a stored attempt (failed ones too)."""
    with reading(db):
        return sql.attempt_judges(db)


def selection(db: Database, judge: str, domains: Sequence[str] = (),
              dialogue_ids: Sequence[str] = ()) -> AttemptSelection:
    """What deleting `judge`'s attempts (in `domains`, on `dialogue_ids`, when given) covers."""
    with reading(db):
        return sql.selection(db, judge, domains, dialogue_ids)


def delete(db: Database, judge: str, domains: Sequence[str] = (),
           dialogue_ids: Sequence[str] = ()) -> AttemptSelection:
    """Delete the selection in one write transaction; what was deleted. Raises `Reviewed`
    (deleting nothing) when reviews are about it."""
    with write(db):
        found = sql.selection(db, judge, domains, dialogue_ids)
        if found.reviews:
            raise Reviewed(found)
        sql.delete(db, judge, domains, dialogue_ids)
    return found
