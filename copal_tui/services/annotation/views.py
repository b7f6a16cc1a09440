"""What the label screens read: one function per thing a screen shows, so no screen touches the
store's SQL modules. Each read is a plain read on the caller's connection (the UI thread's);
the writes are the queue's and adjudication's (copal_tui.services.annotation.queue and
.adjudication).

A response is read a part at a time (`response_part` of the text kind the screen shows,
store.annotation.texts): a screen never loads a long one whole.

Blindness is the screens' business (they decide whether to show a reveal); these functions only
gather what a reveal shows, in typed bundles.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.annotation import annotations as log
from store.annotation import compass_labels, dialogue_reviews
from store.annotation import labels as copal_labels
from store.annotation.annotations import Annotation
from store.annotation.compass_labels import CompassContext
from store.annotation.dialogue_reviews import Mistake, ReviewKey, key_of, subject_of
from store.annotation.labels import Clause, CopalJudgment, ResponseContext
from store.annotation.texts import TextPart, part_of, read_part
from store.artifacts import dialogue, reads, traffic
from store.artifacts.dialogue import StoredDialogue
from store.artifacts.traffic import PairRow
from store.browse import compass
from store.browse.rows import CompassJudgment
from store.db import Database
from store.pipeline.rows import PolicyRow

__all__ = ["Annotation", "Clause", "CompassContext", "CompassReveal", "CopalJudgment",
           "CopalReveal", "Mistake", "PairRow", "PolicyRow", "ResponseContext", "ReviewKey",
           "StoredDialogue", "TextPart", "compass_context", "compass_reveal", "copal_context",
           "copal_reveal", "judge_mistake", "key_of", "labels_of", "latest_note", "part_of",
           "response_part", "stored_dialogue", "subject_of", "traffic_pair",
           "world_policies"]


@dataclass(frozen=True)
class CopalReveal:
    """Everything a COPAL response's reveal shows: the annotators' current labels, the judges'
    marks, and the notes and flags left on it."""

    labels: list[Annotation]
    judgments: list[CopalJudgment]
    remarks: list[Annotation]


@dataclass(frozen=True)
class CompassReveal:
    """The judges' verdicts (rows of the COMPASS browse, as it reads them) and the other
    annotators' current labels on a COMPASS response."""

    judgments: list[CompassJudgment]
    others: list[Annotation]


def copal_context(db: Database, response_id: str,
                  part_bytes: int | None = None) -> ResponseContext | None:
    """The response (its first part of `part_bytes`, None: whole) with its query, contract,
    clauses and item (None when it is gone)."""
    return copal_labels.response_context(db, response_id, part_bytes)


def response_part(db: Database, kind: str, response_id: str, index: int,
                  part_bytes: int) -> TextPart | None:
    """Part `index` of a response, read without the rest of it; `kind` is the text it is
    (a name in store.annotation.texts.TEXTS: "response", "compass_response")."""
    return read_part(db, kind, response_id, index, part_bytes)


def latest_note(db: Database, suite: str, subject: str, annotator: str) -> str | None:
    return log.latest_note(db, suite, subject, annotator)


def copal_reveal(db: Database, response_id: str) -> CopalReveal:
    return CopalReveal(log.labels_of(db, "copal", response_id),
                       copal_labels.judgments_of(db, response_id),
                       log.remarks(db, "copal", response_id))


def copal_remarks(db: Database, response_id: str) -> list[Annotation]:
    return log.remarks(db, "copal", response_id)


def compass_context(db: Database, response_id: str,
                    part_bytes: int | None = None) -> CompassContext | None:
    return compass_labels.label_context(db, response_id, part_bytes)


def compass_reveal(db: Database, response_id: str, annotator: str) -> CompassReveal:
    others = [lab for lab in compass.current_labels(db, response_id)
              if lab.annotator != annotator]
    return CompassReveal(compass.judgments_of(db, response_id), others)


def judge_mistake(db: Database, key: ReviewKey) -> Mistake | None:
    """One judge mistake: the turn's truth and the judge's prediction."""
    return dialogue_reviews.mistake(db, key)


def stored_dialogue(db: Database, dialogue_id: str) -> StoredDialogue | None:
    """A dialogue with its turns and guidelines."""
    return dialogue.stored_dialogue(db, dialogue_id)


def traffic_pair(db: Database, pair_id: str) -> PairRow | None:
    """A stored traffic pair: its earlier turns, query and response, all de-identified."""
    return traffic.pair(db, pair_id)


def world_policies(db: Database, world_id: str) -> list[PolicyRow]:
    """A world's policies in inventory order (the traffic form's policy picker)."""
    return reads.policies(db, world_id)


def labels_of(db: Database, suite: str, subject: str) -> list[Annotation]:
    """Every annotator's current label on a subject of `suite` (the adjudicator's side by
    side)."""
    return log.labels_of(db, suite, subject)
