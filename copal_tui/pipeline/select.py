"""Stage `select`: screen every generated item, then greedily select the suite per world.

Screening verdicts are stored on the item (JSON with the model's answer and the decision), so a
re-run screens only new items; selection is recomputed deterministically from the stored verdicts.

The non-interacting controls (method `control`) are screened with the `control` flag (they
target no pattern or facet, and full compliance is their correct answer) and selected apart, a
few per world (`control_budget`), so that `respond` and `judge` treat them like the suite; they
never take a place in the composed suite and no error rate of the suite counts them.

The composed suite's places are shared among relation patterns by `--pattern-mix`
(`domain.selection.PatternMix`; default `pool`: each pattern's share of the world's screened
candidates, apportioned by largest remainder); the greedy covers the facet cells within each
pattern's quota. The run counts `selected_<pattern>`; its options record the mix.
"""

from __future__ import annotations

import json
from typing import Any

from copal_tui.domain.outputs import ScreeningOut
from copal_tui.domain.selection import (
    Candidate,
    PatternMix,
    control_passes,
    greedy_select,
    screening_passes,
    selection_quotas,
)
from copal_tui.domain.taxonomy import FACET_DEFINITIONS, Facet, Method
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from store.db import write
from store.pipeline import todo as sql
from store.pipeline.rows import ItemRow, WorldRow, contract_view

# One control item per this many suite items of a world (at least one): enough to estimate a
# rate near zero across worlds without spending the judge on them.
CONTROL_SHARE = 6


def control_budget(budget: int) -> int:
    return max(1, budget // CONTROL_SHARE)


def contract_clauses(item: ItemRow) -> list[str]:
    return sorted({c.clause_id for c in (*item.required, *item.forbidden) if c.clause_id})


async def screen(run: StageRun, world: WorldRow, items: list[ItemRow]) -> None:
    comps = {c.id: c for c in sql.compositions(run.db, world.id)}

    async def one(item: ItemRow) -> None:
        comp = comps.get(item.composition_id or "")
        clause_ids = comp.clause_ids if comp else contract_clauses(item)
        clauses = sql.clauses_by_id(run.db, clause_ids)
        facet = item.facet
        control = item.method == Method.CONTROL.value
        payload: dict[str, Any] = {
            "world": world_payload(world), "pattern": item.pattern, "facet": facet,
            "facet_definition": FACET_DEFINITIONS[Facet(facet)] if facet else "",
            "clauses": [clause_payload(c) for c in clauses], "query": item.query,
            "required": contract_view(item.required), "forbidden": contract_view(item.forbidden)}
        if control:
            payload["control"] = True
        out: ScreeningOut | None = await ask(run, run.generator, "screening", payload,
                                             item.id)
        if out is None:
            return
        if control:
            passed, why = control_passes(out.model_dump(), len(item.required))
        else:
            passed, why = screening_passes(out.model_dump(), len(item.required),
                                           len(item.forbidden))
        verdict = json.dumps({**out.model_dump(mode="json"), "passed": passed, "decision": why},
                             sort_keys=True)
        run.count("screen_passed" if passed else "screen_rejected")
        run.later(lambda db: sql.set_screening(db, item.id, verdict))

    # Imported (hand-made) items carry no run id and are not screened or reselected.
    await run.each([i for i in items if i.screening is None and i.run_id is not None], one)


def select_world(run: StageRun, world_id: str, method: str, budget: int,
                 mix: PatternMix | None = None) -> list[str]:
    """Select a world's suite of `method`; `mix` shares the budget among patterns (None: no
    pattern quota, as for the controls, which have no pattern)."""
    items = sql.items(run.db, world_id, method=method, parent=False)
    sizes = {c.id: len(c.clause_ids) for c in sql.compositions(run.db, world_id)}
    cands = [
        Candidate(i.id, i.pattern, i.facet, i.query,
                  float(i.screening.get("confidence", 0)),
                  float(i.screening.get("naturalness", 0)),
                  # A control has no composition: its clause set spreads the selection instead.
                  i.composition_id or "|".join(contract_clauses(i)),
                  sizes.get(i.composition_id or "") or len(contract_clauses(i)) or 1)
        for i in items
        if i.run_id is not None and i.screening and i.screening.get("passed")
    ]
    quotas = None if mix is None else selection_quotas(mix, cands, budget)
    chosen = greedy_select(cands, budget, quotas)
    if mix is not None:
        patterns = {c.id: c.pattern for c in cands}
        for item_id in chosen:
            run.count(f"selected_{patterns[item_id] or 'unmapped'}")
    with write(run.db):
        sql.set_selected(run.db, world_id, method, chosen)
    return chosen


async def execute(run: StageRun) -> None:
    worlds = sql.worlds(run.db, run.opts.worlds)
    for world in worlds:
        for method in (Method.COPAL, Method.CONTROL):
            await screen(run, world, sql.items(run.db, world.id, method=method.value,
                                               parent=False))
    mix = PatternMix.parse(run.opts.copal.pattern_mix)
    for world in worlds:
        chosen = select_world(run, world.id, Method.COPAL.value, run.opts.copal.budget, mix)
        run.count("selected", len(chosen))
        controls = select_world(run, world.id, Method.CONTROL.value,
                                control_budget(run.opts.copal.budget))
        run.count("selected_controls", len(controls))
