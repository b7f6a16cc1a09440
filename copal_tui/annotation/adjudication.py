"""Adjudication: a decision is a label of role "adjudicator" in the annotation log, with the
same payload as the suite's label (for COPAL: marks, and the error and direction they give).
A subject's current decision is the latest adjudicator label/undo event on it when it is a
label, whoever made it; undo appends an undo event that retracts it (nothing is edited in
place). While deciding, the adjudicator holds the subject's one adjudicator slot, so two
adjudicators at once are not handed the same subject. Each call is one committed transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from copal_tui.annotation.queue import later
from copal_tui.annotation.suites import SUITES
from store.annotation import annotations as log
from store.annotation import queue_sql
from store.annotation.annotations import ADJUDICATOR, Annotation
from store.db import Database, utcnow, write


def decide(db: Database, suite: str, subject: str, adjudicator: str,
           **answer: Any) -> Annotation:
    """Record the reference label of a subject (the suite's label fields in `answer`)."""
    with write(db):
        payload, sha = SUITES[suite].label(db, subject, answer)
        event_id = log.append(db, suite=suite, subject=subject, annotator=adjudicator,
                                      role=ADJUDICATOR, action="label", payload=payload,
                                      content_sha256=sha)
        queue_sql.end_lease(db, suite, ADJUDICATOR, subject, adjudicator, utcnow())
        event = log.get(db, event_id)
    assert event is not None
    return event


def adjudicate(db: Database, response_id: str, adjudicator: str, observed: Sequence[str],
               note: str | None = None) -> Annotation:
    """Record the adjudicated reference marks of a COPAL response."""
    return decide(db, "copal", response_id, adjudicator, observed=list(observed), note=note)


def undo_adjudication(db: Database, adjudicator: str, suite: str = "copal") -> Annotation | None:
    """Retract the adjudicator's latest decision that is still current (appends an undo);
    returns the retracted decision, or None."""
    with write(db):
        last = log.last_current(db, suite, adjudicator, role=ADJUDICATOR)
        if last is None:
            return None
        log.append(db, suite=suite, subject=last.subject, annotator=adjudicator,
                           role=ADJUDICATOR, action="undo")
        return last


def lease_adjudication(db: Database, response_id: str, adjudicator: str, minutes: float,
                       suite: str = "copal") -> bool:
    """Hold a subject while deciding it. False when another adjudicator holds it (the caller
    may still show it)."""
    with write(db):
        now = utcnow()
        queue_sql.drop_stale_leases(db, suite, ADJUDICATOR, response_id, now)
        mine = queue_sql.has_lease(db, suite, ADJUDICATOR, response_id, adjudicator)
        if not mine and queue_sql.held_slots(db, suite, ADJUDICATOR, response_id, now):
            return False
        queue_sql.put_lease(db, suite, ADJUDICATOR, response_id, adjudicator, 0, now,
                            later(minutes))
        return True


def release_adjudication(db: Database, response_id: str, adjudicator: str,
                         suite: str = "copal") -> None:
    with write(db):
        queue_sql.end_lease(db, suite, ADJUDICATOR, response_id, adjudicator, utcnow())
