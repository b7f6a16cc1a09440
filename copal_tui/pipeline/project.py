"""Stage `project`: single-policy projections of every selected composed item.

One projection per active clause: a query that keeps the topic but neutralises the other
clauses' triggers, with a contract from that clause alone. Projections are items with
method `projection` and `parent_item_id` set; `respond` and `judge` treat them like any item,
and the report compares them with their parent (composition-induced failures).
"""

from __future__ import annotations

import json
from typing import Any

from copal_tui.domain.outputs import ProjectionOut
from copal_tui.domain.taxonomy import Method
from copal_tui.domain.text import content_words
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from copal_tui.pipeline.generate import contract_rows
from store import pipeline_sql as sql
from store import writes


def projection_id(item_id: str, k: int) -> str:
    return f"{item_id}:p{k}"


def screen_projection(out: ProjectionOut, parent_query: str) -> tuple[bool, str]:
    if not out.required and not out.forbidden:
        return False, "empty contract"
    if content_words(out.query) == content_words(parent_query):
        return False, "same as the composed query"
    return True, "passed"


async def execute(run: StageRun) -> None:
    units = []
    for world in sql.worlds(run.db, run.opts.worlds):
        existing = {i["id"] for i in sql.items(run.db, world["id"], parent=True)}
        comps = {c["id"]: c for c in sql.compositions(run.db, world["id"])}
        for item in sql.items(run.db, world["id"], selected=True, parent=False):
            comp = comps.get(item["composition_id"] or "")
            if item["method"] != Method.COPAL.value or comp is None:
                continue
            members = sql.clauses_by_id(run.db, comp["clause_ids"])
            for k, keep in enumerate(members, 1):
                if projection_id(item["id"], k) not in existing:
                    others = [c for c in members if c["id"] != keep["id"]]
                    units.append((world, item, k, keep, others))

    async def one(unit: tuple[dict, dict, int, dict, list[dict]]) -> None:
        world, item, k, keep, others = unit
        pid = projection_id(item["id"], k)
        out: ProjectionOut | None = await ask(
            run, run.opts.generator, "projection",
            {"world": world_payload(world), "composed_query": item["query"],
             "keep": clause_payload(keep), "neutralise": [clause_payload(c) for c in others]},
            pid,
        )
        if out is None:
            return
        passed, why = screen_projection(out, item["query"])
        if not passed:
            run.count("projection_rejected")
            run.fail(pid, f"projection screening: {why}")
            return
        required, forbidden = contract_rows(out, {keep["id"]})
        row: dict[str, Any] = {
            "id": pid, "world_id": world["id"], "composition_id": item["composition_id"],
            "pattern": None, "facet": None, "query": out.query, "required": required,
            "forbidden": forbidden, "method": Method.PROJECTION.value,
            "parent_item_id": item["id"], "selected": False,
            "trap": f"single-policy projection keeping {keep['id']}",
            "screening": json.loads(json.dumps({"passed": True, "decision": why,
                                                "kept_clause": keep["id"]})),
        }
        run.count("projections")
        run.later(lambda db: writes.insert_item(db, row, run.run_id))

    await run.each(units, one)
