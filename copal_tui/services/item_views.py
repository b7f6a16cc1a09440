"""The in-depth views: one item (its composition, clauses, contract, responses with their marks,
labels and remarks) and one COMPASS query (its world's policies, its responses with verdicts and
labels), each read in one snapshot. Kept apart from `copal_tui.services.browse` so the first
screen does not load them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from copal_tui.domain.compass import is_aligned
from copal_tui.services import reading
from store.annotation.annotations import Annotation
from store.browse import compass
from store.browse import item as browse_item
from store.browse.rows import (
    CompassJudgment,
    CompassLabel,
    CompassResponse,
    ItemDetail,
    ItemJudgment,
    ItemResponse,
    MissingClause,
    ParentItem,
    ParentQuery,
    Projection,
    QueryDetail,
)
from store.db import Database
from store.pipeline.rows import ClauseRow, ContractItem, ItemRow, PolicyRow

# The row types the item and COMPASS query screens read (the interface never imports the
# store's modules itself).
__all__ = ["ClauseRow", "CompassJudgment", "CompassLabel", "CompassResponse", "ContractItem",
           "ItemDetail", "ItemJudgment", "ItemResponse", "ItemRow", "MissingClause",
           "ParentItem", "ParentQuery", "PolicyRow", "Projection", "QueryDetail"]


# ------------------------------------------------------------------ the item view


@dataclass(frozen=True)
class ItemView:
    """One item as the item screen shows it, read in one snapshot: the item with what is
    around it, the (judge, mode) settings that judged any response (contract first) and the
    responses with their marks."""

    item: ItemDetail
    judges: list[tuple[str, str]]
    responses: list[ItemResponse]


def item_view(db: Database, item_id: str) -> ItemView | None:
    with reading(db):
        item = browse_item.item_view(db, item_id)
        if item is None:
            return None
        return ItemView(item, browse_item.item_judges(db, item_id),
                        browse_item.item_responses(db, item_id))


def projection_errors(db: Database, item_ids: list[str], judge: str, mode: str
                      ) -> dict[tuple[str, str], int | None]:
    """(item id, model) -> the judge's error on the base variant of each item."""
    with reading(db):
        return browse_item.projection_errors(db, item_ids, judge, mode)


# ------------------------------------------------------------------ the COMPASS query view


@dataclass(frozen=True)
class QueryView:
    """One COMPASS query with its world's policies and its responses; each label carries
    `aligned`, derived from the query type by the rule the judge's verdicts follow."""

    query: QueryDetail
    policies: list[PolicyRow]
    responses: list[CompassResponse]


def query_view(db: Database, query_id: str) -> QueryView | None:
    with reading(db):
        q = compass.query_view(db, query_id)
        if q is None:
            return None
        policies = compass.world_policies(db, q.world_id)
        responses = compass.query_responses(db, query_id)
    # A label stores what the annotator saw (refused, compliant); alignment follows.
    return QueryView(q, policies, [replace(r, labels=tuple(
        replace(lab, aligned=int(is_aligned(q.query_type, bool(lab.refused),
                                            bool(lab.compliant))))
        for lab in r.labels)) for r in responses])


def compass_label(label: Annotation) -> CompassLabel:
    """A COMPASS label event as the views list it, without `aligned` (what the label queue
    shows of the other annotators: their choices)."""
    return compass.label_row(label)
