"""Stage `project`: screened single-policy projections of every selected composed item.

One projection per active clause: a query that keeps the topic but neutralises the other
clauses' triggers, with a contract from that clause alone. Projections are items with
method `projection` and `parent_item_id` set; `respond` and `judge` treat them like any item,
and the report compares them with their parent (composition-induced failures).

Each projection is screened before anything answers it, as the method prescribes: it is
discarded when it still activates another clause, changes the scenario enough to alter the
target clause, or is unnatural as a standalone request (one `projection_screening` call), or,
without a call, when its contract is empty or its query is the composed one. A discarded
projection is still stored, with `screening.passed` false and its reasons, so the record shows
what was generated and why it was dropped; `respond` never answers it and the paired contrast
leaves its parent out. Projections stored before screening existed are screened on a re-run.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.outputs import ProjectionOut, ProjectionScreeningOut
from copal_tui.domain.taxonomy import Method
from copal_tui.domain.text import content_words
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from copal_tui.pipeline.generate import contract_rows
from store.artifacts import writes
from store.db import dumps
from store.pipeline import todo as sql
from store.pipeline.rows import ClauseRow, ItemRow, WorldRow, contract_view

# Reason codes of a rejected projection (stored in `screening.reasons`) and their wording.
REASONS = {
    "empty_contract": "the contract is empty",
    "same_query": "the query is the composed query",
    "activates_other_clause": "it still activates another clause",
    "changes_target": "it changes the scenario enough to alter the target clause",
    "unnatural": "it is unnatural as a standalone request",
}


def projection_id(item_id: str, k: int) -> str:
    return f"{item_id}:p{k}"


def mechanical_checks(query: str, required: list[Any], forbidden: list[Any],
                      parent_query: str) -> list[str]:
    """Reason codes found without a model: nothing to judge, or nothing was projected."""
    reasons = []
    if not required and not forbidden:
        reasons.append("empty_contract")
    if content_words(query) == content_words(parent_query):
        reasons.append("same_query")
    return reasons


def screening_reasons(out: ProjectionScreeningOut, neutralised: set[str]) -> list[str]:
    """Reason codes from a screening answer. Only ids of neutralised clauses count as still
    active: a model naming the kept clause, or an id it made up, rejects nothing."""
    reasons = []
    if set(out.still_active) & neutralised:
        reasons.append("activates_other_clause")
    if not out.keeps_target:
        reasons.append("changes_target")
    if not out.natural:
        reasons.append("unnatural")
    return reasons


def verdict(keep_id: str, neutralised: list[str], reasons: list[str],
            out: ProjectionScreeningOut | None) -> dict[str, Any]:
    """The `screening` JSON of a projection: the decision, its reason codes, the clauses, and
    the screening answer when there was one."""
    v: dict[str, Any] = {
        "passed": not reasons,
        "decision": "; ".join(REASONS[r] for r in reasons) or "passed",
        "reasons": reasons,
        "kept_clause": keep_id,
        "neutralised": neutralised,
        "screened": out is not None,
    }
    if out is not None:
        v.update({"still_active": [c for c in out.still_active if c in neutralised],
                  "keeps_target": out.keeps_target, "natural": out.natural,
                  "naturalness": out.naturalness, "reason": out.reason})
    return v


async def screen(run: StageRun, world: WorldRow, parent_query: str, keep: ClauseRow,
                 others: list[ClauseRow], query: str, required: list[dict[str, str | None]],
                 forbidden: list[dict[str, str | None]], unit: str) -> dict[str, Any] | None:
    """The screening verdict of one projection; None when the screening call failed (recorded
    as a failed unit, so a re-run retries it). The contract comes as the prompt shows it."""
    neutralised = [c.id for c in others]
    reasons = mechanical_checks(query, required, forbidden, parent_query)
    if reasons:
        return verdict(keep.id, neutralised, reasons, None)
    out: ProjectionScreeningOut | None = await ask(
        run, run.generator, "projection_screening",
        {"world": world_payload(world), "composed_query": parent_query, "query": query,
         "keep": clause_payload(keep), "neutralise": [clause_payload(c) for c in others],
         "required": required, "forbidden": forbidden},
        unit,
    )
    if out is None:
        return None
    return verdict(keep.id, neutralised, screening_reasons(out, set(neutralised)), out)


def _count(run: StageRun, v: dict[str, Any]) -> None:
    run.count("projection_accepted" if v["passed"] else "projection_rejected")
    for r in v["reasons"]:
        run.count(f"projection_rejected_{r}")


Unit = tuple[WorldRow, ItemRow, int, ClauseRow, list[ClauseRow], ItemRow | None]


async def execute(run: StageRun) -> None:
    units: list[Unit] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        existing = {i.id: i for i in sql.items(run.db, world.id, parent=True)}
        comps = {c.id: c for c in sql.compositions(run.db, world.id)}
        for item in sql.items(run.db, world.id, selected=True, parent=False):
            comp = comps.get(item.composition_id or "")
            if item.method != Method.COPAL.value or comp is None:
                continue
            members = sql.clauses_by_id(run.db, comp.clause_ids)
            for k, keep in enumerate(members, 1):
                stored = existing.get(projection_id(item.id, k))
                # Screened already, or imported (hand-made projections are taken as given).
                if stored is not None and (stored.run_id is None
                                           or (stored.screening or {}).get("screened")
                                           is not None):
                    continue
                others = [c for c in members if c.id != keep.id]
                units.append((world, item, k, keep, others, stored))

    async def one(unit: Unit) -> None:
        world, item, k, keep, others, stored = unit
        pid = projection_id(item.id, k)
        if stored is not None:  # generated before projections were screened
            v = await screen(run, world, item.query, keep, others, stored.query,
                             contract_view(stored.required), contract_view(stored.forbidden),
                             pid)
            if v is not None:
                _count(run, v)
                run.later(lambda db: sql.set_screening(db, pid, dumps(v)))
            return
        out: ProjectionOut | None = await ask(
            run, run.generator, "projection",
            {"world": world_payload(world), "composed_query": item.query,
             "keep": clause_payload(keep), "neutralise": [clause_payload(c) for c in others]},
            pid,
        )
        if out is None:
            return
        required, forbidden = contract_rows(out, {keep.id})
        v = await screen(run, world, item.query, keep, others, out.query, required,
                         forbidden, pid)
        if v is None:
            return
        _count(run, v)
        row: dict[str, Any] = {
            "id": pid, "world_id": world.id, "composition_id": item.composition_id,
            "pattern": None, "facet": None, "query": out.query, "required": required,
            "forbidden": forbidden, "method": Method.PROJECTION.value,
            "parent_item_id": item.id, "selected": False,
            "trap": f"single-policy projection keeping {keep.id}", "screening": v,
        }
        run.later(lambda db: writes.insert_item(db, row, run.run_id))

    await run.each(units, one)
    accepted, rejected = run.counts.get("projection_accepted", 0), \
        run.counts.get("projection_rejected", 0)
    if accepted or rejected:
        run.progress.message = (f"{accepted} projection(s) accepted, {rejected} rejected by "
                                "screening (kept in the store; respond skips them)")
