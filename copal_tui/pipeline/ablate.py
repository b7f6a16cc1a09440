"""Stage `ablate`: the three construction baselines at COPAL's final budget, per world.

raw-policy planning (the policy inventory only), clause-only planning (grounded clauses, no
patterns or facets) and no-facet generation (COPAL's compositions, generic queries). As in the
method's Table 9, each method generates a candidate pool (B) and selects N final items, N being
the size of COPAL's selected suite in the same world (the matched budget). A method whose
screened pool is smaller than N is under-filled and the run says so (progress message and
`short_<method>` counts); the report lists the shortfall among its exclusions.

Every candidate is screened like COPAL's items, but without a pattern or facet (these methods
target none, so facet fit is not asked for), and selected by a rule that never looks at the
mapping: screening passed, spread over the planner's own combinations (the policies, clauses or
composition an item involves), then higher screening confidence, naturalness, the shorter query
and the id, skipping near-duplicates (COPAL's tiebreakers and deduplication without its
pattern x facet coverage term). Each candidate is then mapped onto pattern x facet for
evaluation only.

The planner's provenance is kept in `screening.planned`: the policy ids a raw-policy item
involves (its contract cites no clause, since that planner never saw clauses) or the clause ids
of a clause-only item. Screening and mapping see the clauses behind them.
"""

from __future__ import annotations

import math
from typing import Any

from copal_tui.domain.outputs import GenerationOut, MappingOut, PlannerOut, ScreeningOut
from copal_tui.domain.selection import Candidate, greedy_select, screening_passes
from copal_tui.domain.taxonomy import PATTERN_FACETS, Method
from copal_tui.pipeline.base import StageRun, ask, clause_payload, policy_views, world_payload
from copal_tui.pipeline.generate import contract_rows
from store.artifacts import writes
from store.db import dumps, write
from store.pipeline import todo as sql
from store.pipeline.rows import ClauseRow, ItemRow, WorldRow, contract_view

METHODS = (Method.RAW_POLICY, Method.CLAUSE_ONLY, Method.NO_FACET)
# Candidates generated per final item: the method's 36 direct candidates for 12 final items.
POOL_FACTOR = 3
Job = tuple[str, str, dict[str, Any], str, set[str]]


def matched_budget(run: StageRun, world_id: str) -> int:
    """COPAL's selected suite size in the world: every baseline selects this many items."""
    return len(sql.items(run.db, world_id, method=Method.COPAL.value, selected=True,
                         parent=False))


def _known(ids: list[str], known: set[str]) -> list[str]:
    return sorted({i for i in ids if i in known})


def _jobs(run: StageRun, world: WorldRow, budget: int) -> list[Job]:
    wid = world.id
    clauses = [c for c in sql.clauses(run.db, wid) if c.effect]
    clause_ids = {c.id for c in clauses}
    n_items = POOL_FACTOR * budget
    jobs: list[Job] = []
    if not sql.item_ids_with_prefix(run.db, f"{wid}:raw_policy:"):
        jobs.append(("planner_raw_policy", f"{wid}:raw_policy:",
                     {"world": world_payload(world), "policies": policy_views(sql.policies(run.db, wid)),
                      "n_items": n_items}, Method.RAW_POLICY.value, set()))
    if not sql.item_ids_with_prefix(run.db, f"{wid}:clause_only:"):
        jobs.append(("planner_clause_only", f"{wid}:clause_only:",
                     {"world": world_payload(world), "clauses": [clause_payload(c) for c in clauses],
                      "n_items": n_items}, Method.CLAUSE_ONLY.value, clause_ids))
    comps = sql.compositions(run.db, wid)
    # Variants per composition so that the compositions together give the pool.
    per_comp = max(run.opts.copal.variants, math.ceil(n_items / max(1, len(comps))))
    for comp in comps:
        prefix = f"{comp.id}:no_facet:"
        if not sql.item_ids_with_prefix(run.db, prefix):
            members = sql.clauses_by_id(run.db, comp.clause_ids)
            jobs.append(("planner_no_facet", prefix,
                         {"world": world_payload(world),
                          "composition": {"id": comp.id, "pattern": comp.pattern,
                                          "clauses": [clause_payload(c) for c in members]},
                          "n_variants": per_comp},
                         Method.NO_FACET.value, set(comp.clause_ids)))
    return jobs


async def plan(run: StageRun, world: WorldRow, budget: int) -> None:
    wid = world.id
    policy_ids = {p.id for p in sql.policies(run.db, wid)}

    async def one(job: Job) -> None:
        task, prefix, payload, method, allowed = job
        out: PlannerOut | GenerationOut | None = await ask(run, run.generator, task,
                                                           payload, prefix)
        if out is None:
            return
        planned: list[Any] = list(out.items if isinstance(out, PlannerOut) else out.variants)
        comp_id = payload["composition"]["id"] if "composition" in payload else None
        rows = []
        for n, p in enumerate(planned, 1):
            required, forbidden = contract_rows(p, allowed)
            provenance = None
            if method == Method.RAW_POLICY.value:
                provenance = {"planned": {"policy_ids": _known(p.policy_ids, policy_ids)}}
            elif method == Method.CLAUSE_ONLY.value:
                provenance = {"planned": {"clause_ids": _known(p.clause_ids, allowed)}}
            rows.append({"id": f"{prefix}v{n}", "world_id": wid, "composition_id": comp_id,
                         "pattern": None, "facet": None, "query": p.query,
                         "required": required, "forbidden": forbidden, "method": method,
                         "parent_item_id": None, "selected": False, "trap": None,
                         "screening": provenance})
        run.count(f"planned_{method}", len(rows))
        run.insert_later(writes.insert_item, rows)

    await run.each(_jobs(run, world, budget), one)


def active_clause_ids(item: ItemRow, by_id: dict[str, ClauseRow],
                      comps: dict[str, tuple[str, ...]]) -> list[str]:
    """The clauses an item involves, from its own construction: the composition's clauses
    (no-facet), the clauses of the policies the raw-policy planner named, or the clause-only
    planner's clauses plus those its contract cites."""
    planned = (item.screening or {}).get("planned") or {}
    if item.composition_id is not None and item.composition_id in comps:
        return list(comps[item.composition_id])
    ids = {c.clause_id for c in (*item.required, *item.forbidden) if c.clause_id}
    ids |= set(planned.get("clause_ids") or [])
    policies = set(planned.get("policy_ids") or [])
    ids |= {cid for cid, c in by_id.items() if policies & set(c.policy_ids)}
    return sorted(i for i in ids if i in by_id)


async def screen_and_map(run: StageRun, world: WorldRow, method: str) -> None:
    """Screen (no pattern or facet) and then map every candidate still missing either."""
    wid = world.id
    todo = [i for i in sql.items(run.db, wid, method=method, parent=False)
            if i.run_id is not None
            and not {"passed", "mapping"} <= set(i.screening or {})]
    by_id = {c.id: c for c in sql.clauses(run.db, wid)}
    comps = {c.id: c.clause_ids for c in sql.compositions(run.db, wid)}
    patterns = {p.value: [f.value for f in fs] for p, fs in PATTERN_FACETS.items()}

    async def one(item: ItemRow) -> None:
        verdict = dict(item.screening or {})
        active = [clause_payload(by_id[c]) for c in active_clause_ids(item, by_id, comps)]
        base = {"world": world_payload(world), "query": item.query, "clauses": active,
                "required": contract_view(item.required),
                "forbidden": contract_view(item.forbidden)}
        if "passed" not in verdict:
            if len(active) < 2:
                verdict.update({"passed": False, "decision": "involves fewer than two known "
                                "clauses", "confidence": 0.0, "naturalness": 0.0})
            else:
                screened: ScreeningOut | None = await ask(
                    run, run.generator, "screening",
                    {**base, "pattern": None, "facet": None, "facet_definition": ""},
                    item.id)
                if screened is None:
                    return
                s = {**screened.model_dump(mode="json"), "fits_facet": True}
                passed, why = screening_passes(s, len(item.required), len(item.forbidden))
                verdict.update({**s, "passed": passed, "decision": why})
            run.count(f"screen_{'passed' if verdict['passed'] else 'rejected'}_{method}")
        mapped: MappingOut | None = None
        if "mapping" not in verdict:
            mapped = await ask(run, run.generator, "mapping", {**base, "patterns": patterns},
                               item.id)
        pattern = facet = None
        if mapped is not None:
            pattern = mapped.pattern.value if mapped.pattern else None
            facet = mapped.facet.value if mapped.facet and mapped.pattern and \
                mapped.facet in PATTERN_FACETS[mapped.pattern] else None
            verdict["mapping"] = {"pattern": pattern, "facet": facet, "reason": mapped.reason}
        text = dumps(verdict)

        def store(db: Any) -> None:
            if mapped is not None:
                sql.set_mapping(db, item.id, pattern, facet)
            sql.set_screening(db, item.id, text)

        run.later(store)

    await run.each(todo, one)


def combination(item: ItemRow) -> str:
    """The planner's own grouping of an item (what COPAL's selection spreads over)."""
    if item.composition_id:
        return item.composition_id
    planned = (item.screening or {}).get("planned") or {}
    return "policies:" + ",".join(planned.get("policy_ids") or []) + ";clauses:" + \
        ",".join(planned.get("clause_ids") or [])


def baseline_candidates(items: list[ItemRow]) -> list[Candidate]:
    """Screened pipeline items as selection candidates. Pattern and facet are left out on
    purpose: the mapping is for evaluation only and must not steer the selection."""
    return [
        Candidate(i.id, None, None, i.query,
                  float(i.screening.get("confidence") or 0),
                  float(i.screening.get("naturalness") or 0), combination(i))
        for i in items
        if i.run_id is not None and i.screening and i.screening.get("passed")
    ]


def select_baseline(run: StageRun, world_id: str, method: str, budget: int) -> tuple[list[str],
                                                                                     int]:
    """Select `budget` items of a baseline method; returns them and the screened pool size."""
    cands = baseline_candidates(sql.items(run.db, world_id, method=method, parent=False))
    chosen = greedy_select(cands, budget)
    with write(run.db):
        sql.set_selected(run.db, world_id, method, chosen)
    return chosen, len(cands)


async def execute(run: StageRun) -> None:
    worlds = sql.worlds(run.db, run.opts.worlds)
    budgets = {w.id: matched_budget(run, w.id) for w in worlds}
    for world in worlds:
        if not budgets[world.id]:
            run.fail(world.id, "ablate: the world has no selected COPAL suite to match "
                     "the budget to; run `select` first")
            continue
        await plan(run, world, budgets[world.id])
    short: list[str] = []
    for world in worlds:
        budget = budgets[world.id]
        if not budget:
            continue
        for method in METHODS:
            await screen_and_map(run, world, method.value)
            chosen, pool = select_baseline(run, world.id, method.value, budget)
            run.count(f"selected_{method.value}", len(chosen))
            if len(chosen) < budget:
                run.count(f"short_{method.value}", budget - len(chosen))
                short.append(f"{method.value} in {world.id}: {len(chosen)} of {budget} "
                             f"({pool} screened candidates)")
    if short:
        run.progress.message = ("below the matched budget (COPAL's selected suite), the "
                                "screened candidate pool was too small: " + "; ".join(short))
