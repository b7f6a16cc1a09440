"""Stage `generate`: for each confirmed composition (two or three clauses) and each target facet
of its pattern, N query variants, each with its handling contract (R and F items with kind and
source clause; every clause of the composition yields items). Then the non-interacting
controls: per world, a few sets of licensing clauses only (`compose_filter.control_sets`), each
written as N variants of method `control` with pattern and facet null.

Item ids are `<composition>:<facet>:v<n>` and `<control set>:control:v<n>`; a unit that already
has items is skipped, so the stage resumes without duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from copal_tui.domain.compose_filter import control_id, control_sets
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
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline.rows import ClauseRow, WorldRow

CONTROL_HANDLING = ("non-interacting control: no clause restricts, gates or routes another; "
                    "answer every part")


def contract_rows(variant: Any, allowed_clauses: set[str]
                  ) -> tuple[list[dict[str, str | None]], list[dict[str, str | None]]]:
    """Contract items as stored; a clause id outside the composition is dropped (kept null)."""

    def conv(items: list[Any]) -> list[dict[str, str | None]]:
        return [
            {"id": c.id, "text": c.text, "kind": str(c.kind),
             "clause_id": c.clause_id if c.clause_id in allowed_clauses else None}
            for c in items
        ]

    return conv(variant.required), conv(variant.forbidden)


@dataclass(frozen=True, slots=True)
class Target:
    """What a unit writes queries for: a confirmed composition, or a control set (no pattern)."""

    id: str
    pattern: str | None
    clause_ids: tuple[str, ...]


# (world, composition or control set, member clauses, facet: None for a control)
Unit = tuple[WorldRow, Target, list[ClauseRow], Facet | None]


def units(run: StageRun) -> list[Unit]:
    out: list[Unit] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        for comp in sql.compositions(run.db, world.id):
            members = sql.clauses_by_id(run.db, comp.clause_ids)
            for facet in PATTERN_FACETS[Pattern(comp.pattern)]:
                if not sql.item_ids_with_prefix(run.db, f"{comp.id}:{facet.value}:"):
                    out.append((world, Target(comp.id, comp.pattern, comp.clause_ids), members,
                                facet))
        clauses = [clause_payload(c) for c in sql.clauses(run.db, world.id)]
        for ids in control_sets(clauses, seed=run.opts.seed):
            cid = control_id(world.id, ids)
            if not sql.item_ids_with_prefix(run.db, f"{cid}:control:"):
                out.append((world, Target(cid, None, tuple(ids)),
                            sql.clauses_by_id(run.db, list(ids)), None))
    return out


async def execute(run: StageRun) -> None:
    model = run.generator

    async def one(unit: Unit) -> None:
        world, comp, members, facet = unit
        pattern = Pattern(comp.pattern) if facet is not None and comp.pattern else None
        payload: dict[str, Any] = {
            "world": world_payload(world),
            "composition": {"id": comp.id, "pattern": comp.pattern,
                            "clauses": [clause_payload(c) for c in members]},
            "facet": facet.value if facet else None,
            "facet_definition": FACET_DEFINITIONS[facet] if facet else "",
            "handling": PATTERN_HANDLING[pattern] if pattern else CONTROL_HANDLING,
            "n_variants": run.opts.copal.variants,
        }
        if facet is None:
            payload["control"] = True
        tag = facet.value if facet else Method.CONTROL.value
        out: GenerationOut | None = await ask(run, model, "generation", payload,
                                              f"{comp.id}:{tag}")
        if out is None:
            return
        rows = []
        allowed = set(comp.clause_ids)
        variants: list[QueryVariant] = out.variants[: run.opts.copal.variants]
        for n, v in enumerate(variants, 1):
            required, forbidden = contract_rows(v, allowed)
            rows.append({
                "id": f"{comp.id}:{tag}:v{n}", "world_id": world.id,
                # A control set is no composition: its clauses are its contract items' sources.
                "composition_id": comp.id if facet else None,
                "pattern": pattern.value if pattern else None,
                "facet": facet.value if facet else None,
                "query": v.query, "required": required, "forbidden": forbidden,
                "method": (Method.COPAL if facet else Method.CONTROL).value,
                "parent_item_id": None, "selected": False,
                "trap": v.trap or None, "gate": v.gate, "route": v.route,
            })
        run.count("items" if facet else "control_items", len(rows))
        run.insert_later(writes.insert_item, rows)

    await run.each(units(run), one)
