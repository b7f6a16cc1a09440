"""Browsing: the reads behind the worlds list, one world's lists and records, the item view and
the COMPASS query view, each in one read transaction.

List pages keep the store's shape (`Page` of row dicts keyed by column: the paged table renders
any list by column key); what a screen reads field by field comes back as dataclasses. The
items list goes through `copal_tui.services.cases` (the cases service) for its `disagree:`/`cell:` filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from copal_tui.domain.compass import is_aligned
from copal_tui.services import reading
from copal_tui.services.jobs import RunDetail, run_detail
from store.annotation.annotations import Annotation
from store.artifacts import reads
from store.browse import browse_item_sql, browse_sql, compass_browse_sql
from store.browse.browse_sql import FilterError, Page, PageRequest
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
           "FilterError", "ItemDetail", "ItemJudgment", "ItemResponse", "ItemRow", "MissingClause",
           "Page",
           "PageRequest", "ParentItem", "ParentQuery", "PolicyRow", "Projection", "QueryDetail",
           "RunDetail"]


# ------------------------------------------------------------------ worlds


def worlds_page(db: Database, req: PageRequest) -> Page:
    """One page of worlds with their counts of policies, clauses, compositions and items."""
    with reading(db):
        return browse_sql.worlds_page(db, req)


def world_stats(db: Database, world_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per world id: `responses`, `labelled`, `judge_err`, `human_err` (the slow columns the
    worlds list fills in after showing a page; a pass over each world's responses)."""
    with reading(db):
        return browse_sql.world_stats(db, world_ids)


@dataclass(frozen=True)
class WorldSummary:
    """The head of the world screen: the world and its counts; `compass_queries` is None when
    the world has no COMPASS suite (and the screen shows no COMPASS tab)."""

    id: str
    name: str
    industry: str
    risk_tier: str
    policies: int
    clauses: int
    compositions: int
    items: int
    selected: int
    compass_queries: int | None


def world_summary(db: Database, world_id: str) -> WorldSummary | None:
    with reading(db):
        row = browse_sql.world_summary(db, world_id)
        if row is None:
            return None
        compass = None
        if compass_browse_sql.has_suite(db, world_id):
            compass = sum(compass_browse_sql.suite_counts(db, world_id).values())
    return WorldSummary(
        id=row.id, name=row.name, industry=row.industry, risk_tier=row.risk_tier,
        policies=row.policies, clauses=row.clauses, compositions=row.compositions,
        items=row.items, selected=row.selected, compass_queries=compass)


def policies_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return browse_sql.policies_page(db, world_id, req)


def clauses_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return browse_sql.clauses_page(db, world_id, req)


def compositions_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return browse_sql.compositions_page(db, world_id, req)


def items_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """Items with the report's `disagree:`, `cell:` and `judge:` filters besides the list's."""
    from copal_tui.services import cases

    return cases.items_page(db, world_id, req)


def runs_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """The runs whose options named the world (or every world), newest first."""
    with reading(db):
        return browse_sql.runs_page(db, world_id, req)


def compass_queries_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return compass_browse_sql.queries_page(db, world_id, req)


# ------------------------------------------------------------------ one world's records


@dataclass(frozen=True)
class PolicyRecord:
    policy: dict[str, Any]
    clauses: list[dict[str, Any]]  # grounded from it (the first 50)


@dataclass(frozen=True)
class ClauseRecord:
    clause: dict[str, Any]
    policies: list[tuple[str, dict[str, Any] | None]]  # (id, policy; None: missing)


@dataclass(frozen=True)
class CompositionRecord:
    composition: dict[str, Any]
    members: list[dict[str, Any]]  # its clauses; `{"id": ...}` alone for a missing one


def policy_record(db: Database, world_id: str, policy_id: str) -> PolicyRecord | None:
    with reading(db):
        pol = reads.policy(db, world_id, policy_id)
        if pol is None:
            return None
        grounded = browse_sql.clauses_page(db, world_id, PageRequest(
            filters={"policy": policy_id}, limit=50))
    return PolicyRecord(asdict(pol), grounded.rows)


def clause_record(db: Database, world_id: str, clause_id: str) -> ClauseRecord | None:
    with reading(db):
        c = reads.clause(db, clause_id)
        if c is None:
            return None
        policies = [(pid, reads.policy(db, world_id, pid)) for pid in c.policy_ids]
    # The world screen still reads its records as mappings: the typed rows are flattened here.
    return ClauseRecord(asdict(c), [(pid, None if p is None else asdict(p))
                                    for pid, p in policies])


def composition_record(db: Database, comp_id: str) -> CompositionRecord | None:
    with reading(db):
        comp = reads.composition(db, comp_id)
        if comp is None:
            return None
        members = [reads.clause(db, cid) for cid in comp.clause_ids]
    return CompositionRecord(asdict(comp), [{"id": cid} if m is None else asdict(m)
                                            for cid, m in zip(comp.clause_ids, members,
                                                              strict=True)])


def run_record(db: Database, run_id: str) -> RunDetail | None:
    """One run with its manifest (the runs tab shows the same record as the jobs screen)."""
    return run_detail(db, run_id)


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
        item = browse_item_sql.item_view(db, item_id)
        if item is None:
            return None
        return ItemView(item, browse_item_sql.item_judges(db, item_id),
                        browse_item_sql.item_responses(db, item_id))


def projection_errors(db: Database, item_ids: list[str], judge: str, mode: str
                      ) -> dict[tuple[str, str], int | None]:
    """(item id, model) -> the judge's error on the base variant of each item."""
    with reading(db):
        return browse_item_sql.projection_errors(db, item_ids, judge, mode)


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
        q = compass_browse_sql.query_view(db, query_id)
        if q is None:
            return None
        policies = compass_browse_sql.world_policies(db, q.world_id)
        responses = compass_browse_sql.query_responses(db, query_id)
    # A label stores what the annotator saw (refused, compliant); alignment follows.
    return QueryView(q, policies, [replace(r, labels=tuple(
        replace(lab, aligned=int(is_aligned(q.query_type, bool(lab.refused),
                                            bool(lab.compliant))))
        for lab in r.labels)) for r in responses])


def compass_label(label: Annotation) -> CompassLabel:
    """A COMPASS label event as the views list it, without `aligned` (what the label queue
    shows of the other annotators: their choices)."""
    return compass_browse_sql.label_row(label)
