"""Stage `ground`: policies -> clauses (trigger, scope, effect, source span, confidence).

One call per policy. A policy that already has clauses is skipped (resumable). Effects outside
the six are stored with effect NULL and an audit note, never forced into a pattern.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.outputs import GroundingOut
from copal_tui.pipeline.base import StageRun, ask, policy_view, world_payload
from store.artifacts import writes
from store.pipeline import pipeline_sql as sql
from store.pipeline.rows import PolicyRow, WorldRow


async def execute(run: StageRun) -> None:
    units: list[tuple[WorldRow, PolicyRow]] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        done = sql.grounded_policy_ids(run.db, world.id)
        units += [(world, p) for p in sql.policies(run.db, world.id) if p.id not in done]

    async def one(unit: tuple[WorldRow, PolicyRow]) -> None:
        world, policy = unit
        out: GroundingOut | None = await ask(
            run, run.generator, "grounding",
            {"world": world_payload(world), "policy": policy_view(policy)},
            f"{world.id}/{policy.id}",
        )
        if out is None:
            return
        rows: list[dict[str, Any]] = []
        for n, c in enumerate(out.clauses, 1):
            effect = None if c.effect == "OTHER" else str(c.effect)
            span = c.source_span if c.source_span in policy.text else policy.text
            note = c.audit_note if effect is None else None
            if effect is None and not note:
                note = "effect outside the six supported effects"
            if span is policy.text and c.source_span not in policy.text:
                note = ((note + "; ") if note else "") + "source span not verbatim; whole policy kept"
            rows.append({
                "id": f"{world.id}:C:{policy.id}:{n}", "world_id": world.id,
                "policy_ids": [policy.id], "trigger": c.trigger, "scope": c.scope,
                "effect": effect, "source_span": span, "confidence": c.confidence,
                "audit_note": note,
            })
            run.count("clauses")
            if effect is None:
                run.count("audit_notes")
        run.insert_later(writes.insert_clause, rows)

    await run.each(units, one)
