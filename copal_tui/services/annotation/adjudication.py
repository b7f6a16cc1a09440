"""Adjudication: a decision is a label of role "adjudicator" in the annotation log, with the
same payload as the suite's label (for COPAL: marks, and the error and direction they give).
A subject's current decision is the latest adjudicator label/undo event on it when it is a
label, whoever made it; undo appends an undo event that retracts it (nothing is edited in
place). While deciding, the adjudicator holds the subject's one adjudicator slot, so two
adjudicators at once are not handed the same subject. A decision and a flag are handed in as
their payload models (copal_tui.domain.annotation.payloads), built by the screen. Each call is
one committed transaction.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from copal_tui.domain.annotation.subjects import check
from copal_tui.services.annotation.queue import later
from copal_tui.services.annotation.suites import rules
from store.annotation import adjudication, queue
from store.annotation import annotations as log
from store.annotation.adjudication import Counts
from store.annotation.annotations import ADJUDICATOR, Annotation
from store.db import Database, utcnow, write

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import LabelPayload, Remark


def decide(db: Database, suite: str, subject: str, adjudicator: str,
           decision: LabelPayload) -> Annotation:
    """Record the reference label of a subject (the suite's label model; another model, or a
    dict, is a TypeError before anything is written)."""
    check(suite, ADJUDICATOR, "label", decision)
    with write(db):
        stored, sha = rules(suite).label(db, subject, decision)
        event_id = log.append(db, suite=suite, subject=subject, annotator=adjudicator,
                              role=ADJUDICATOR, action="label", payload=stored,
                              content_sha256=sha)
        queue.end_lease(db, suite, ADJUDICATOR, subject, adjudicator, utcnow())
        event = log.get(db, event_id)
    assert event is not None
    return event


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
        queue.drop_stale_leases(db, suite, ADJUDICATOR, response_id, now)
        mine = queue.has_lease(db, suite, ADJUDICATOR, response_id, adjudicator)
        if not mine and queue.held_slots(db, suite, ADJUDICATOR, response_id, now):
            return False
        queue.put_lease(db, suite, ADJUDICATOR, response_id, adjudicator, 0, now,
                            later(minutes))
        return True


def release_adjudication(db: Database, response_id: str, adjudicator: str,
                         suite: str = "copal") -> None:
    with write(db):
        queue.end_lease(db, suite, ADJUDICATOR, response_id, adjudicator, utcnow())


# -------------------------------------------------------------- what the screen reads

def next_pending(db: Database, after: str, search: str, adjudicator: str,
                 skip: Collection[str] = ()) -> str | None:
    """The next undecided candidate after `after`, wrapping round to the start, never one in
    `skip` (a decision that still waits for the database)."""
    for start in (after, ""):
        while True:
            row = adjudication.adjudication_step(db, after=start, pending=True,
                                                     search=search, who=adjudicator,
                                                     now=utcnow())
            if row is None or row.response_id not in skip:
                break
            start = row.response_id
        if row is not None:
            return row.response_id
    return None


def step(db: Database, after: str, forward: bool, search: str) -> str | None:
    """The neighbouring candidate, decided or not."""
    row = adjudication.adjudication_step(db, after=after, forward=forward, pending=False,
                                             search=search)
    return None if row is None else row.response_id


def counts(db: Database, search: str = "") -> Counts:
    return adjudication.adjudication_counts(db, search)


def current_decision(db: Database, response_id: str, suite: str = "copal") -> Annotation | None:
    return log.decision(db, suite, response_id)


def reason(db: Database, response_id: str) -> str | None:
    """Why the response is a candidate (None when it is not one)."""
    return adjudication.adjudication_reason(db, response_id)


def flag(db: Database, response_id: str, adjudicator: str, remark: Remark) -> int:
    """Flag a COPAL response (an event of the log, one transaction)."""
    with write(db):
        rules("copal").require(db, response_id)
        return log.append(db, suite="copal", subject=response_id, annotator=adjudicator,
                          action="flag", payload=remark)
