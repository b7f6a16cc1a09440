"""Typed rows of the two in-depth browse views: one COPAL item (its world's name, composition,
active clauses, parent, projections, responses with every judgment, the annotators' labels, the
adjudication and the notes and flags) and one COMPASS query (its verification, parent, intended
policy, responses with each judge's verdict and the annotators' labels).

The pipeline's row types (`store.pipeline.rows`) and the annotation log's (`Annotation`,
`CopalJudgment`) are reused as they are; what is here is only what the views add around them.
Rows are frozen: a screen that hides some of them (blind mode) builds a changed copy
(`dataclasses.replace`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.annotation.annotations import Annotation
from store.annotation.labels import CopalJudgment
from store.pipeline.rows import ClauseRow, CompositionRow, Contract, ItemRow, PolicyRow

# ------------------------------------------------------------------ the COPAL item view


@dataclass(frozen=True, slots=True)
class MissingClause:
    """An active clause id with no clause row (a composition or a contract naming a clause
    that is not in the database)."""

    id: str


@dataclass(frozen=True, slots=True)
class ParentItem:
    """The composed item a single-policy projection was made from."""

    id: str
    query: str
    pattern: str | None
    facet: str | None


@dataclass(frozen=True, slots=True)
class Projection:
    """A single-policy projection of the item, with its contract."""

    id: str
    query: str
    required: Contract
    forbidden: Contract


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """The item and everything around it except the responses (capped at `PROJECTION_LIMIT`
    projections; `response_total` counts every response)."""

    item: ItemRow
    world_name: str
    composition: CompositionRow | None
    clauses: tuple[ClauseRow | MissingClause, ...]
    parent: ParentItem | None
    projections: tuple[Projection, ...]
    response_total: int


@dataclass(frozen=True)
class ItemJudgment(CopalJudgment):
    """A judge's marks on a response with the quotes it gave as evidence (contract item id ->
    quote; None when it gave none) and the facet it observed."""

    evidence: dict[str, str] | None = None
    facet: str | None = None


@dataclass(frozen=True, slots=True)
class ItemResponse:
    """A response with every judgment (by (judge, mode)), the annotators' current labels, the
    current adjudication and the notes and flags left on it. `blinded` is set by a screen that
    hid the others' marks from an annotator."""

    id: str
    model: str
    variant: str
    text: str | None
    failure: str | None
    judgments: dict[tuple[str, str], ItemJudgment] = field(default_factory=dict)
    labels: tuple[Annotation, ...] = ()
    adjudication: Annotation | None = None
    remarks: tuple[Annotation, ...] = ()
    blinded: bool = False


# ------------------------------------------------------------------ the COMPASS query view


@dataclass(frozen=True, slots=True)
class ParentQuery:
    """The base query an edge query derives from."""

    id: str
    query_type: str
    text: str


@dataclass(frozen=True, slots=True)
class QueryDetail:
    """One COMPASS query with its world's name, the intended policy (`policy_kind` and
    `policy_text` None when it is not a policy of the world), its verification (`status`,
    `reason`, `matched` ids; None when never verified), its generation `attributes`, its parent,
    how many edge queries derive from it and how many responses it has."""

    id: str
    world_id: str
    world_name: str
    policy_id: str
    query_type: str
    strategy: str | None
    form: str | None
    parent_id: str | None
    text: str
    status: str
    reason: str | None
    matched: list[str] | None
    attributes: dict[str, Any]
    policy_kind: str | None
    policy_text: str | None
    parent: ParentQuery | None
    children: int
    response_total: int

    @property
    def intended(self) -> PolicyRow | None:
        """The intended policy, when it is a policy of the world."""
        if self.policy_text is None:
            return None
        return PolicyRow(self.policy_id, self.policy_kind or "?", self.policy_text)


@dataclass(frozen=True, slots=True)
class CompassJudgment:
    """A judge's verdict on a COMPASS response (`refused`, `compliant`, `aligned` None when the
    judgment failed)."""

    judge: str
    refused: int | None
    compliant: int | None
    aligned: int | None
    failure_mode: str | None
    rationale: str | None
    failure: str | None


@dataclass(frozen=True, slots=True)
class CompassLabel:
    """An annotator's current label on a COMPASS response, with `aligned` derived from the
    query type by the rule the judge's verdicts follow."""

    annotator: str
    refused: bool | None
    compliant: bool | None
    aligned: int | None
    failure_mode: str | None
    note: str | None


@dataclass(frozen=True, slots=True)
class CompassResponse:
    """A response to a COMPASS query (failed ones too) with each judge's verdict (by judge)
    and the annotators' current labels (by annotator)."""

    id: str
    query_id: str
    model: str
    variant: str
    text: str | None
    prefilter: str | None
    prefilter_model: str | None
    prefilter_reason: str | None
    failure: str | None
    judgments: tuple[CompassJudgment, ...] = ()
    labels: tuple[CompassLabel, ...] = ()
