"""Stage `ablate`: the three construction baselines at COPAL's final budget.

raw-policy planning (the inventory only), clause-only planning (grounded clauses, no patterns or
facets) and no-facet generation (COPAL's compositions, generic queries). Every candidate is mapped
onto pattern x facet after generation (for reporting only), screened like COPAL's items (facet fit
is not required: these methods do not target facets) and greedily selected to the same budget.
"""

from __future__ import annotations

import json
from typing import Any

from copal_tui.domain.outputs import GenerationOut, MappingOut, PlannerOut, ScreeningOut
from copal_tui.domain.selection import screening_passes
from copal_tui.domain.taxonomy import PATTERN_FACETS, Method
from copal_tui.pipeline.base import StageRun, ask, clause_payload, world_payload
from copal_tui.pipeline.generate import contract_rows
from copal_tui.pipeline.select import select_world
from store import pipeline_sql as sql
from store import writes

METHODS = (Method.RAW_POLICY, Method.CLAUSE_ONLY, Method.NO_FACET)


async def plan(run: StageRun, world: dict[str, Any]) -> None:
    wid = world["id"]
    clauses = [c for c in sql.clauses(run.db, wid) if c["effect"]]
    clause_ids = {c["id"] for c in clauses}
    # A candidate pool half again the final budget, like COPAL's own pool after screening.
    n_items = max(2, run.opts.budget * 3 // 2)
    jobs: list[tuple[str, str, dict[str, Any], str, set[str]]] = []
    if not sql.item_ids_with_prefix(run.db, f"{wid}:raw_policy:"):
        jobs.append(("planner_raw_policy", f"{wid}:raw_policy:",
                     {"world": world_payload(world), "policies": sql.policies(run.db, wid),
                      "n_items": n_items}, Method.RAW_POLICY.value, set()))
    if not sql.item_ids_with_prefix(run.db, f"{wid}:clause_only:"):
        jobs.append(("planner_clause_only", f"{wid}:clause_only:",
                     {"world": world_payload(world), "clauses": [clause_payload(c) for c in clauses],
                      "n_items": n_items}, Method.CLAUSE_ONLY.value, clause_ids))
    for comp in sql.compositions(run.db, wid):
        prefix = f"{comp['id']}:no_facet:"
        if not sql.item_ids_with_prefix(run.db, prefix):
            members = sql.clauses_by_id(run.db, comp["clause_ids"])
            jobs.append(("planner_no_facet", prefix,
                         {"world": world_payload(world),
                          "composition": {"id": comp["id"], "pattern": comp["pattern"],
                                          "clauses": [clause_payload(c) for c in members]},
                          "n_variants": run.opts.variants},
                         Method.NO_FACET.value, set(comp["clause_ids"])))

    async def one(job: tuple[str, str, dict[str, Any], str, set[str]]) -> None:
        task, prefix, payload, method, allowed = job
        out: PlannerOut | GenerationOut | None = await ask(run, run.opts.generator, task,
                                                           payload, prefix)
        if out is None:
            return
        planned: list[Any] = list(out.items if isinstance(out, PlannerOut) else out.variants)
        comp_id = payload["composition"]["id"] if "composition" in payload else None
        rows = []
        for n, p in enumerate(planned, 1):
            required, forbidden = contract_rows(p, allowed)
            rows.append({"id": f"{prefix}v{n}", "world_id": wid, "composition_id": comp_id,
                         "pattern": None, "facet": None, "query": p.query,
                         "required": required, "forbidden": forbidden, "method": method,
                         "parent_item_id": None, "selected": False, "trap": None})
        run.count(f"planned_{method}", len(rows))
        run.insert_later(writes.insert_item, rows)

    await run.each(jobs, one)


async def map_and_screen(run: StageRun, world: dict[str, Any], method: str) -> None:
    wid = world["id"]
    todo = [i for i in sql.items(run.db, wid, method=method, parent=False)
            if i["screening"] is None]
    by_id = {c["id"]: c for c in sql.clauses(run.db, wid)}
    patterns = {p.value: [f.value for f in fs] for p, fs in PATTERN_FACETS.items()}

    async def one(item: dict[str, Any]) -> None:
        ids = sorted({c["clause_id"] for c in item["required"] + item["forbidden"]
                      if c.get("clause_id")})
        active = [clause_payload(by_id[c]) for c in ids if c in by_id]
        base = {"world": world_payload(world), "query": item["query"], "clauses": active,
                "required": item["required"], "forbidden": item["forbidden"]}
        mapped: MappingOut | None = await ask(run, run.opts.generator, "mapping",
                                              {**base, "patterns": patterns}, item["id"])
        if mapped is None:
            return
        pattern = mapped.pattern.value if mapped.pattern else None
        facet = mapped.facet.value if mapped.facet and mapped.pattern and \
            mapped.facet in PATTERN_FACETS[mapped.pattern] else None
        screened: ScreeningOut | None = await ask(
            run, run.opts.generator, "screening",
            {"world": base["world"], "pattern": pattern, "facet": facet,
             "facet_definition": "", "clauses": active, "query": item["query"],
             "required": item["required"], "forbidden": item["forbidden"]}, item["id"])
        if screened is None:
            return
        s = {**screened.model_dump(mode="json"), "fits_facet": True}
        passed, why = screening_passes(s, len(item["required"]), len(item["forbidden"]))
        verdict = json.dumps({**s, "passed": passed, "decision": why,
                              "mapping_reason": mapped.reason}, sort_keys=True)

        def store(db: Any) -> None:
            sql.set_mapping(db, item["id"], pattern, facet)
            sql.set_screening(db, item["id"], verdict)

        run.later(store)

    await run.each(todo, one)


async def execute(run: StageRun) -> None:
    worlds = sql.worlds(run.db, run.opts.worlds)
    for world in worlds:
        await plan(run, world)
    for world in worlds:
        for method in METHODS:
            await map_and_screen(run, world, method.value)
            chosen = select_world(run, world["id"], method.value, run.opts.budget)
            run.count(f"selected_{method.value}", len(chosen))
