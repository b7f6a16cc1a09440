"""Stage `select`: screen every generated item, then greedily select the suite per world.

Screening verdicts are stored on the item (JSON with the model's answer and the decision), so a
re-run screens only new items; selection is recomputed deterministically from the stored verdicts.
"""

from __future__ import annotations

import json
from typing import Any

from copal_tui.domain.outputs import ScreeningOut
from copal_tui.domain.selection import Candidate, greedy_select, screening_passes
from copal_tui.domain.taxonomy import FACET_DEFINITIONS, Facet, Method
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from store import pipeline_sql as sql
from store.db import write


async def screen(run: StageRun, world: dict[str, Any], items: list[dict[str, Any]]) -> None:
    comps = {c["id"]: c for c in sql.compositions(run.db, world["id"])}

    async def one(item: dict[str, Any]) -> None:
        comp = comps.get(item["composition_id"] or "")
        clause_ids = comp["clause_ids"] if comp else sorted(
            {c["clause_id"] for c in item["required"] + item["forbidden"] if c.get("clause_id")})
        clauses = sql.clauses_by_id(run.db, clause_ids)
        facet = item["facet"]
        out: ScreeningOut | None = await ask(
            run, run.opts.generator, "screening",
            {"world": world_payload(world), "pattern": item["pattern"], "facet": facet,
             "facet_definition": FACET_DEFINITIONS[Facet(facet)] if facet else "",
             "clauses": [clause_payload(c) for c in clauses], "query": item["query"],
             "required": item["required"], "forbidden": item["forbidden"]},
            item["id"],
        )
        if out is None:
            return
        passed, why = screening_passes(out.model_dump(), len(item["required"]),
                                       len(item["forbidden"]))
        verdict = json.dumps({**out.model_dump(mode="json"), "passed": passed, "decision": why},
                             sort_keys=True)
        run.count("screen_passed" if passed else "screen_rejected")
        run.later(lambda db: sql.set_screening(db, item["id"], verdict))

    # Imported (hand-made) items carry no run id and are not screened or reselected.
    await run.each([i for i in items if i["screening"] is None and i["run_id"] is not None], one)


def select_world(run: StageRun, world_id: str, method: str, budget: int) -> list[str]:
    items = sql.items(run.db, world_id, method=method, parent=False)
    cands = [
        Candidate(i["id"], i["pattern"], i["facet"], i["query"],
                  float(i["screening"].get("confidence", 0)),
                  float(i["screening"].get("naturalness", 0)), i["composition_id"])
        for i in items
        if i["run_id"] is not None and i["screening"] and i["screening"].get("passed")
    ]
    chosen = greedy_select(cands, budget)
    with write(run.db):
        sql.set_selected(run.db, world_id, method, chosen)
    return chosen


async def execute(run: StageRun) -> None:
    worlds = sql.worlds(run.db, run.opts.worlds)
    for world in worlds:
        await screen(run, world, sql.items(run.db, world["id"], method=Method.COPAL.value,
                                           parent=False))
    for world in worlds:
        chosen = select_world(run, world["id"], Method.COPAL.value, run.opts.budget)
        run.count("selected", len(chosen))
