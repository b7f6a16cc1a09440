"""Stage `generate`: for each confirmed composition and each target facet of its pattern,
N query variants, each with its handling contract (R and F items with kind and source clause).

Item ids are `<composition>:<facet>:v<n>`; a composition x facet that already has items is
skipped, so the stage resumes without duplicates.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.outputs import GenerationOut, QueryVariant
from copal_tui.domain.taxonomy import (
    FACET_DEFINITIONS,
    PATTERN_FACETS,
    PATTERN_HANDLING,
    Facet,
    Method,
    Pattern,
)
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from store import pipeline_sql as sql
from store import writes


def contract_rows(variant: Any, allowed_clauses: set[str]) -> tuple[list[dict], list[dict]]:
    """Contract items as stored; a clause id outside the composition is dropped (kept null)."""

    def conv(items: list[Any]) -> list[dict[str, Any]]:
        return [
            {"id": c.id, "text": c.text, "kind": str(c.kind),
             "clause_id": c.clause_id if c.clause_id in allowed_clauses else None}
            for c in items
        ]

    return conv(variant.required), conv(variant.forbidden)


async def execute(run: StageRun) -> None:
    units: list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], Facet]] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        for comp in sql.compositions(run.db, world["id"]):
            members = sql.clauses_by_id(run.db, comp["clause_ids"])
            for facet in PATTERN_FACETS[Pattern(comp["pattern"])]:
                if not sql.item_ids_with_prefix(run.db, f"{comp['id']}:{facet.value}:"):
                    units.append((world, comp, members, facet))

    async def one(unit: tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], Facet]) -> None:
        world, comp, members, facet = unit
        pattern = Pattern(comp["pattern"])
        out: GenerationOut | None = await ask(
            run, run.opts.generator, "generation",
            {"world": world_payload(world),
             "composition": {"id": comp["id"], "pattern": pattern.value,
                             "clauses": [clause_payload(c) for c in members]},
             "facet": facet.value, "facet_definition": FACET_DEFINITIONS[facet],
             "handling": PATTERN_HANDLING[pattern], "n_variants": run.opts.variants},
            f"{comp['id']}:{facet.value}",
        )
        if out is None:
            return
        rows = []
        allowed = set(comp["clause_ids"])
        variants: list[QueryVariant] = out.variants[: run.opts.variants]
        for n, v in enumerate(variants, 1):
            required, forbidden = contract_rows(v, allowed)
            rows.append({
                "id": f"{comp['id']}:{facet.value}:v{n}", "world_id": world["id"],
                "composition_id": comp["id"], "pattern": pattern.value, "facet": facet.value,
                "query": v.query, "required": required, "forbidden": forbidden,
                "method": Method.COPAL.value, "parent_item_id": None, "selected": False,
                "trap": v.trap or None, "gate": v.gate, "route": v.route,
            })
        run.count("items", len(rows))
        run.insert_later(writes.insert_item, rows)

    await run.each(units, one)
