"""The payload of each kind of annotation event, per suite (pydantic models), and the one
type every writer hands the log.

A label screen builds its suite's model (`CopalLabel.from_marks`, `CompassLabel`,
`DialogueReview`; a decision is the suite's label model too) or a `Remark`, and that model
travels unchanged through the write queue, the annotation queue and the log, which serialises it
once (store/annotation/annotations.py). Being frozen and checked when built, a model is valid
wherever it goes. The readers of the log take the stored JSON as it is, so reading never loads
this module. Field order is the stored key order. Values keep the types the old per-suite tables
had, so exports and the report read the same values: a COPAL error is the integer 0 or 1, not a
boolean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from copal_tui.domain.compass import FAILURE_MODES
from copal_tui.domain.contract import evaluate, item_kinds, unknown_ids
from copal_tui.domain.dialogue import ERROR_TYPES
from copal_tui.domain.suites import load
from copal_tui.domain.suites import suite as suite_named
from copal_tui.domain.taxonomy import Direction, Facet

_STRICT = ConfigDict(extra="forbid", frozen=True)
_DIRECTIONS = frozenset(d.value for d in Direction)
_FACETS = tuple(f.value for f in Facet)


class LabelPayload(BaseModel):
    """What a label (or decision) carries: the base of every suite's label model (its
    descriptor names which, `copal_tui.domain.suites`), frozen and strict."""

    model_config = _STRICT


class CopalLabel(LabelPayload):
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
        if self.direction is not None and self.direction not in _DIRECTIONS:
            raise ValueError(f"unknown direction {self.direction!r}")
        return self

    @classmethod
    def from_marks(cls, required: Iterable[Mapping[str, object]],
                   forbidden: Iterable[Mapping[str, object]], observed: Iterable[str], *,
                   facet: str | None = None, note: str | None = None) -> CopalLabel:
        """The label that marks `observed` on a contract (its items as stored: id, kind, ...)
        give: the error and direction of copal_tui.domain.contract.evaluate, and the observed
        facet only on an error (a correct response shows no failure to name). ValueError for
        a mark that is not a contract item or an unknown facet."""
        req, forb = list(required), list(forbidden)
        req_ids, forb_ids = [str(c["id"]) for c in req], [str(c["id"]) for c in forb]
        marks = list(observed)
        bad = unknown_ids(req_ids, forb_ids, marks)
        if bad:
            raise ValueError(f"not contract items of this response: {', '.join(bad)}")
        verdict = evaluate(req_ids, forb_ids, marks, item_kinds(req))
        kept = None
        if facet and verdict.error:
            if facet not in _FACETS:
                raise ValueError(f"unknown facet {facet!r} (one of {', '.join(_FACETS)})")
            kept = str(facet)
        return cls(observed=marks, error=1 if verdict.error else 0,
                   direction=verdict.direction.value, facet=kept, note=note)


class CompassLabel(LabelPayload):
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


class DialogueReview(LabelPayload):
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

    @property
    def action(self) -> Literal["note", "flag"]:
        """The event it is: a flag when it gives a reason, else a note."""
        return "flag" if self.flag else "note"


# What any event of the log carries.
Payload = LabelPayload | Remark


def model_for(suite: str, action: str) -> type[Payload]:
    """The payload model of a label (or decision) in `suite`, or of a note or flag."""
    if action != "label":
        return Remark
    found: type[LabelPayload] = load(suite_named(suite).payload)  # the suite's descriptor
    return found
