"""Browsing: the reads behind the worlds list and one world's lists and records, each in one read
transaction (the item and COMPASS query views are `copal_tui.services.item_views`: the first
screen does not load them).

List pages keep the store's shape (`Page` of row dicts keyed by column: the paged table renders
any list by column key); what a screen reads field by field comes back as dataclasses. The
items list goes through `copal_tui.services.cases` (the cases service) for its `disagree:`/`cell:` filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from copal_tui.services import reading
from store.browse import lists
from store.browse.lists import FilterError, Page, PageRequest
from store.db import Database

if TYPE_CHECKING:
    from copal_tui.services.jobs import RunDetail
    from store.browse.rows import MissingClause
    from store.pipeline.rows import ClauseRow, CompositionRow, PolicyRow

# The worlds list, the first screen, loads only what it reads: the row types and the COMPASS
# and record reads are imported where they are used.
__all__ = ["FilterError", "Page", "PageRequest"]


# ------------------------------------------------------------------ worlds


def worlds_page(db: Database, req: PageRequest) -> Page:
    """One page of worlds with their counts of policies, clauses, compositions and items."""
    with reading(db):
        return lists.worlds_page(db, req)


def world_stats(db: Database, world_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per world id: `responses`, `labelled`, `judge_err`, `human_err` (the slow columns the
    worlds list fills in after showing a page; a pass over each world's responses)."""
    with reading(db):
        return lists.world_stats(db, world_ids)


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
    from store.browse import compass as browse_compass

    with reading(db):
        row = lists.world_summary(db, world_id)
        if row is None:
            return None
        compass = None
        if browse_compass.has_suite(db, world_id):
            compass = sum(browse_compass.suite_counts(db, world_id).values())
    return WorldSummary(
        id=row.id, name=row.name, industry=row.industry, risk_tier=row.risk_tier,
        policies=row.policies, clauses=row.clauses, compositions=row.compositions,
        items=row.items, selected=row.selected, compass_queries=compass)


def policies_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return lists.policies_page(db, world_id, req)


def clauses_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return lists.clauses_page(db, world_id, req)


def compositions_page(db: Database, world_id: str, req: PageRequest) -> Page:
    with reading(db):
        return lists.compositions_page(db, world_id, req)


def items_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """Items with the report's `disagree:`, `cell:` and `judge:` filters besides the list's."""
    from copal_tui.services import cases

    return cases.items_page(db, world_id, req)


def runs_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """The runs whose options named the world (or every world), newest first."""
    with reading(db):
        return lists.runs_page(db, world_id, req)


def compass_queries_page(db: Database, world_id: str, req: PageRequest) -> Page:
    from store.browse import compass as browse_compass

    with reading(db):
        return browse_compass.queries_page(db, world_id, req)


# ------------------------------------------------------------------ one world's records


@dataclass(frozen=True)
class PolicyRecord:
    policy: PolicyRow
    clauses: list[ClauseRow]  # grounded from it (the first 50)


@dataclass(frozen=True)
class ClauseRecord:
    clause: ClauseRow
    policies: list[tuple[str, PolicyRow | None]]  # (id, policy; None: missing)


@dataclass(frozen=True)
class CompositionRecord:
    composition: CompositionRow
    members: list[ClauseRow | MissingClause]  # its clauses, in order


def policy_record(db: Database, world_id: str, policy_id: str) -> PolicyRecord | None:
    from store.artifacts import reads

    with reading(db):
        pol = reads.policy(db, world_id, policy_id)
        if pol is None:
            return None
        grounded = lists.clauses_page(db, world_id, PageRequest(
            filters={"policy": policy_id}, limit=50))
        clauses = [reads.clause(db, r["id"]) for r in grounded.rows]
    return PolicyRecord(pol, [c for c in clauses if c is not None])


def clause_record(db: Database, world_id: str, clause_id: str) -> ClauseRecord | None:
    from store.artifacts import reads

    with reading(db):
        c = reads.clause(db, clause_id)
        if c is None:
            return None
        policies = [(pid, reads.policy(db, world_id, pid)) for pid in c.policy_ids]
    return ClauseRecord(c, policies)


def composition_record(db: Database, comp_id: str) -> CompositionRecord | None:
    from store.artifacts import reads
    from store.browse.rows import MissingClause

    with reading(db):
        comp = reads.composition(db, comp_id)
        if comp is None:
            return None
        members = [reads.clause(db, cid) for cid in comp.clause_ids]
    return CompositionRecord(comp, [MissingClause(cid) if m is None else m
                                    for cid, m in zip(comp.clause_ids, members, strict=True)])


def run_record(db: Database, run_id: str) -> RunDetail | None:
    """One run with its manifest (the runs tab shows the same record as the jobs screen)."""
    from copal_tui.services.jobs import run_detail

    return run_detail(db, run_id)
