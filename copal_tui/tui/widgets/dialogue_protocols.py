"""What the dialogue renderables read of a turn's truth and of a judge's prediction, as
read-only protocols: the typed rows of copal_tui/services/dialogues.py (a `TurnRow`, a
`StoredPrediction`) and the review queue's judge mistake (`Mistake`, which carries the turn's
truth and the prediction under the same names) all fit them, so one renderer serves both
screens without converting rows to mappings.
"""

from __future__ import annotations

from typing import Protocol


class Named(Protocol):
    """A guideline named with a verdict: what a turn's truth and a prediction share."""

    @property
    def category(self) -> int | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def phase(self) -> int | None: ...
    @property
    def violation(self) -> int: ...


class Truth(Named, Protocol):
    """A turn's truth, as `truth_lines` reads it: a `TurnRow`, or the judge mistake the review
    queue shows (it carries the turn's truth under the same names)."""

    @property
    def guideline_text(self) -> str | None: ...
    @property
    def evidence(self) -> str | None: ...


class Prediction(Named, Protocol):
    """A judge's prediction on one turn, as `prediction_lines` reads it (the dialogue screen's
    `StoredPrediction`, or one the review queue builds from a mistake's `p_*` columns)."""

    @property
    def reason(self) -> str | None: ...
