"""Judged dialogues for the browse screens: the dialogues list (a page, and the wrong counts
filled in after it shows), one dialogue with its judge attempts, and one attempt's verdicts,
predictions and reviews on that dialogue, each in one read transaction.

The list keeps the store's shape (`Page` of row dicts: the paged table renders any list by
column key). Everything else is typed: the dialogue is the store's `StoredDialogue` (its turns
`TurnRow`, its guideline document `GuidelineRow`, re-exported here for the screens, which never
import the store), and the attempts, predictions, reviews and verdicts are typed rows too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copal_tui.domain import dialogue as rules
from copal_tui.services import reading
from store.annotation import dialogue_reviews
from store.artifacts import dialogue as artifacts_dialogue
from store.artifacts.dialogue import GuidelineRow, StoredDialogue, StoredPrediction, TurnRow
from store.browse import dialogue as browse_dialogue
from store.browse.dialogue import JudgeAttempt
from store.browse.lists import FilterError, Page, PageRequest
from store.db import Database

__all__ = ["MISTAKES", "FilterError", "GuidelineRow", "JudgeAttempt", "Page", "PageRequest",
           "StoredDialogue", "StoredPrediction", "TurnRow"]

# The kinds of prediction that are wrong by the metrics' rules (the others: "right", and
# "flagged_elsewhere", which counts against strict detection only): the domain's.
MISTAKES = frozenset(rules.MISTAKES)


# ------------------------------------------------------------------ the list


def dialogues_page(db: Database, req: PageRequest) -> Page:
    """One page of dialogues by id with their turn, violation, judge and attempt counts."""
    with reading(db):
        return browse_dialogue.dialogues_page(db, req)


def wrong_counts(db: Database, dialogue_ids: list[str]) -> dict[str, int]:
    """Per dialogue id: its wrong predictions over every judge and attempt."""
    with reading(db):
        return browse_dialogue.wrong_counts(db, dialogue_ids)


# ------------------------------------------------------------------ one dialogue


@dataclass(frozen=True)
class DialogueDetail:
    """A dialogue (with its turns and guideline document) and its judge attempts by judge and
    attempt, failed ones too."""

    dialogue: StoredDialogue
    attempts: tuple[JudgeAttempt, ...]

    def judges(self) -> list[str]:
        return list(dict.fromkeys(a.judge for a in self.attempts))

    def attempts_of(self, judge: str | None) -> list[int]:
        return [a.attempt for a in self.attempts if a.judge == judge]

    def failure(self, judge: str | None, attempt: int | None) -> str | None:
        return next((a.failure for a in self.attempts
                     if a.judge == judge and a.attempt == attempt), None)

    def first_attempt(self, judge: str | None) -> int | None:
        """The judge's first attempt that did not fail (else its first)."""
        ok = [a.attempt for a in self.attempts if a.judge == judge and a.failure is None]
        found = ok or self.attempts_of(judge)
        return found[0] if found else None


def dialogue_detail(db: Database, dialogue_id: str) -> DialogueDetail | None:
    with reading(db):
        d = artifacts_dialogue.stored_dialogue(db, dialogue_id)
        if d is None:
            return None
        attempts = tuple(browse_dialogue.judge_attempts(db, dialogue_id))
    return DialogueDetail(d, attempts)


@dataclass(frozen=True)
class Review:
    """A reviewer's current review of a wrong prediction."""

    annotator: str
    error_type: str  # a label's payload always names one (checked on write)
    note: str | None


@dataclass(frozen=True)
class AttemptDetail:
    """One judge attempt on one dialogue: `kinds` per scored turn ('right',
    'flagged_elsewhere' or one of MISTAKES), `predictions` per turn it named and the current
    `reviews` of its wrong turns."""

    kinds: dict[int, str] = field(default_factory=dict)
    predictions: dict[int, StoredPrediction] = field(default_factory=dict)
    reviews: dict[int, tuple[Review, ...]] = field(default_factory=dict)

    def wrong_turns(self) -> list[int]:
        return sorted(i for i, k in self.kinds.items() if k in MISTAKES)


def attempt_detail(db: Database, dialogue_id: str, judge: str, attempt: int) -> AttemptDetail:
    with reading(db):
        kinds = browse_dialogue.turn_verdicts(db, dialogue_id, judge, attempt)
        preds = browse_dialogue.predictions_of(db, dialogue_id, judge, attempt)
        reviews = {}
        for i, kind in kinds.items():
            if kind in MISTAKES:
                found = tuple(Review(r.annotator, str(r.get("error_type")), r.get("note"))
                              for r in dialogue_reviews.reviews_of_turn(db, dialogue_id, judge,
                                                                        attempt, i))
                if found:
                    reviews[i] = found
    return AttemptDetail(kinds, preds, reviews)
