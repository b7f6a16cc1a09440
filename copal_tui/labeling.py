"""COPAL labelling operations outside a queue (the CLI, tests, benchmarks): a label, the undo
of one's latest label, a skip, flag or note, and which labels went stale.

Each operation is one committed `BEGIN IMMEDIATE` transaction, so a label survives a killed
process or a dropped SSH session the moment the call returns. The payload (with the error and
direction computed from the marks, never typed in) is the one the queue writes
(copal_tui.annotation.suites); the events go to the annotation log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from copal_tui.annotation.suites import SUITES, copal_label
from copal_tui.domain.contract import content_sha256
from store.annotation import annotations as log
from store.annotation import labels as label_sql
from store.db import Database, write

SUITE = "copal"


@dataclass(frozen=True)
class Submitted:
    event_id: int
    error: int
    direction: str


def submit(db: Database, response_id: str, annotator: str, observed: Sequence[str], *,
           facet: str | None = None, note: str | None = None) -> Submitted:
    """Record an annotator's marks on a response as their current label."""
    with write(db):
        label, sha = SUITES[SUITE].label(db, response_id, copal_label(
            db, response_id, observed, facet=facet, note=note))
        event_id = log.append(db, suite=SUITE, subject=response_id, annotator=annotator,
                              action="label", payload=label, content_sha256=sha)
    assert label.error is not None and label.direction is not None  # derived from the marks
    return Submitted(event_id, label.error, label.direction)


def undo_last(db: Database, annotator: str) -> str | None:
    """Retract the annotator's most recent current COPAL label; returns its response id."""
    with write(db):
        last = log.last_current(db, SUITE, annotator)
        if last is None:
            return None
        log.append(db, suite=SUITE, subject=last.subject, annotator=annotator, action="undo")
        return last.subject


def record(db: Database, response_id: str, annotator: str, action: str, *,
           note: str | None = None, flag: str | None = None) -> int:
    """Append a skip, flag or note event."""
    if action not in ("skip", "flag", "note"):
        raise ValueError(action)
    from copal_tui.domain.annotation_payloads import Remark

    with write(db):
        SUITES[SUITE].require(db, response_id)
        return log.append(db, suite=SUITE, subject=response_id, annotator=annotator,
                          action=action,
                          payload=None if action == "skip" else Remark(note=note, flag=flag))


@dataclass(frozen=True)
class StaleLabel:
    label_event_id: int
    response_id: str
    annotator: str


def stale_labels(db: Database) -> list[StaleLabel]:
    """Current labels whose query, contract or response changed since they were given."""
    out = []
    for row in label_sql.labels_with_content(db):
        now = content_sha256(row.query, row.required, row.forbidden, row.response or "")
        if row.content_sha256 and row.content_sha256 != now:
            out.append(StaleLabel(row.id, row.response_id, row.annotator))
    return out
