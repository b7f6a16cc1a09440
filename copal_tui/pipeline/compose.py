"""Stage `compose`: the deterministic filter proposes clause sets; the model confirms each.

Candidates come from `domain.compose_filter` (trigger compatibility, scope compatibility, effect
anchor -> pattern); a composition row is written for every candidate with status confirmed or
rejected and the model's reason. Already decided candidates are skipped.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compose_filter import Candidate, candidates
from copal_tui.domain.outputs import CompositionOut
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from store import pipeline_sql as sql
from store import writes


async def execute(run: StageRun) -> None:
    units: list[tuple[dict[str, Any], Candidate, list[dict[str, Any]]]] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        clauses = sql.clauses(run.db, world["id"])
        by_id = {c["id"]: c for c in clauses}
        done = sql.composition_ids(run.db, world["id"])
        for cand in candidates(clauses, per_pattern=run.opts.per_pattern):
            if cand.composition_id(world["id"]) not in done:
                units.append((world, cand, [by_id[c] for c in cand.clause_ids]))

    async def one(unit: tuple[dict[str, Any], Candidate, list[dict[str, Any]]]) -> None:
        world, cand, members = unit
        cid = cand.composition_id(world["id"])
        out: CompositionOut | None = await ask(
            run, run.opts.generator, "composition",
            {"world": world_payload(world), "pattern": cand.pattern.value,
             "clauses": [clause_payload(c) for c in members]}, cid,
        )
        if out is None:
            return
        accepted = out.accept and (out.pattern is None or out.pattern == cand.pattern)
        row = {
            "id": cid, "world_id": world["id"], "clause_ids": list(cand.clause_ids),
            "pattern": cand.pattern.value, "status": "confirmed" if accepted else "rejected",
            "reason": out.reason if out.accept == accepted
            else f"model proposed {out.pattern}: {out.reason}",
        }
        run.count("confirmed" if accepted else "rejected")
        run.later(lambda db: writes.insert_composition(db, row, run.run_id))

    await run.each(units, one)
