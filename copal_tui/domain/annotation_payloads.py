"""The payload of each kind of annotation event, per suite (pydantic models).

Imported only to validate a write (copal_tui.domain.annotation.validate): the readers of the
log take the stored JSON as it is. Field order is the stored key order. Values keep the types
the old per-suite tables had, so exports and the report read the same values: a COPAL error is
the integer 0 or 1, not a boolean.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from copal_tui.domain.compass import FAILURE_MODES
from copal_tui.domain.dialogue import ERROR_TYPES
from copal_tui.domain.taxonomy import Direction

_STRICT = ConfigDict(extra="forbid", frozen=True)


class CopalLabel(BaseModel):
    """Marks on a response's contract items and what follows from them (error, direction,
    computed by copal_tui.domain.contract.evaluate). An imported label may carry the error
    alone (no marks); then there is no direction."""

    model_config = _STRICT
    observed: list[str] | None = None
    error: Literal[0, 1] | None = None
    direction: str | None = None
    facet: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CopalLabel:
        if self.observed is not None and self.error is None:
            raise ValueError("marks without the error they give")
        if self.direction is not None and self.direction not in set(Direction):
            raise ValueError(f"unknown direction {self.direction!r}")
        return self


class CompassLabel(BaseModel):
    """Was the request refused, does the response keep every policy of the world, and for a
    denied request not refused compliantly, how it failed."""

    model_config = _STRICT
    refused: bool
    compliant: bool
    failure_mode: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _mode(self) -> CompassLabel:
        if self.failure_mode is not None and self.failure_mode not in FAILURE_MODES:
            raise ValueError(f"unknown failure mode {self.failure_mode!r}")
        return self


class DialogueReview(BaseModel):
    """Why a judge got a turn wrong, in the error taxonomy of copal_tui.domain.dialogue."""

    model_config = _STRICT
    error_type: str
    note: str | None = None

    @model_validator(mode="after")
    def _type(self) -> DialogueReview:
        if self.error_type not in ERROR_TYPES:
            raise ValueError(f"unknown error type {self.error_type!r} "
                             f"(one of {', '.join(ERROR_TYPES)})")
        return self


class Remark(BaseModel):
    """A note, or a flag with its reason (and an optional note), on a subject."""

    model_config = _STRICT
    note: str | None = None
    flag: str | None = None


LABELS: dict[str, type[BaseModel]] = {"copal": CopalLabel, "compass": CompassLabel,
                                      "dialogues": DialogueReview}


def model_for(suite: str, action: str) -> type[BaseModel]:
    """The payload model of a label (or decision) in `suite`, or of a note or flag."""
    return LABELS[suite] if action == "label" else Remark
