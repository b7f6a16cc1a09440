"""The dialogue suite's part of the one annotation queue: a subject is one judge's wrong
prediction on one dialogue turn ([dialogue, judge, attempt, turn]), a label a `DialogueReview`
(the kind of mistake), what the reviewer was shown the conversation up to the turn with the
turn's truth and the judge's prediction.

Order: by dialogue, judge, attempt and turn (a reviewer reads a conversation forwards).
Campaigns and `copal label --judge` draw by judge; balanced, round robin over judge x kind of
mistake.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, ClassVar

from copal_tui.domain.annotation.subjects import dialogue_parts
from copal_tui.services import launch
from copal_tui.services.annotation.suites import Draw, Filters, Rules, sha256_of
from store.annotation import dialogue_reviews
from store.annotation.campaigns import Candidate
from store.artifacts import dialogue
from store.db import Database, StoreError

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import DialogueReview


class Dialogue(Rules["DialogueReview"]):
    name = "dialogue"
    draws_by: ClassVar[Mapping[str, Draw]] = {
        "judges": Draw("a judge with scored dialogue attempts", launch.dialogue_judges,
                       means="the judge whose mistakes are reviewed",
                       none_yet="`copal run dialogue_judge --judge MODEL` judges the stored "
                                "dialogues"),
    }

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        judges = filters.judges or (None,)
        return [c for judge in judges for c in dialogue_reviews.candidates(db, judge)]

    def require(self, db: Database, subject: str) -> None:
        key = dialogue_reviews.ReviewKey(*dialogue_parts(subject))
        if not dialogue_reviews.is_mistake(db, key):
            raise StoreError(f"not a wrong prediction: {key.judge} attempt {key.attempt} on "
                             f"{key.dialogue_id} turn {key.turn_index}")

    def label(self, db: Database, subject: str,
              label: DialogueReview) -> tuple[DialogueReview, str | None]:
        self.require(db, subject)
        key = dialogue_reviews.ReviewKey(*dialogue_parts(subject))
        row = dialogue_reviews.mistake(db, key)
        d = dialogue.stored_dialogue(db, key.dialogue_id)
        # What the reviewer is shown: the conversation up to the turn, the turn's truth and the
        # judge's prediction (the mistake's row holds both), as the columns they were read from
        # (so the hash is the one earlier reviews were given).
        shown = {"turns": [(t.role, t.content) for t in (d.turns if d else ())
                           if t.turn_index <= key.turn_index],
                 "mistake": {} if row is None else asdict(row)}
        sha = sha256_of(json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str))
        # An empty note is no note.
        stored = label if label.note or label.note is None else \
            type(label)(error_type=label.error_type, note=None)
        return stored, sha
