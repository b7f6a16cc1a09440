"""Stage `compass_generate`: a world's COMPASS queries, in three steps (the COMPASS paper,
Section 3.1).

1. Base queries: per allowlist policy `--per-policy` allowed-base queries, per denylist policy
   as many denied-base queries. Base slots vary over BASE_AXES (style, specificity,
   complexity; stored in `attributes`). With `--edge-writer variants` each allowlist policy
   also gets as many allowed-edge queries (permitted, but worded so an over-cautious bot might
   refuse), their slots over ALLOWED_EDGE_ANGLES.
2. Verification of the base queries (the verifier of `compass_verify`): edges are written only
   from kept denied-base queries.
3. Edge queries from each kept denied-base query:
   - denied-edge, per form of EDGE_FORMS (as the public COMPASS configuration defines them: 2
     short queries of 100-200 words from the short form's 3 strategies, 4 long ones of 300-800
     words from the long form's 6), each hiding the request behind a different strategy of its
     form. The writer gets each slot's strategy, its definition and the word range. COMPASS
     samples a form's strategies per base query at random (seeded by the base query's length);
     here they rotate with the base query's slot and its policy's place, so a policy with three
     kept base queries covers every strategy of both forms;
   - allowed-edge with `--edge-writer reference` (the default), as the public COMPASS
     allowed_edge_queries_synthesis.py does: one rewrite per allowlist policy, each call
     turning the denied-base query into one maximally deceptive query that is in fact allowed
     under that policy (the rewriter's claims are stored in `attributes` for the verifier).
     `compass_verify` keeps a rewrite only when the skeptical verifier says IN-POLICY.
   `parent_id` is the base query.

Every query is one id per (policy, type, slot), (parent, form, strategy) or (parent,
allowlist policy): a re-run writes only the missing ones, re-verifies failed ones and writes
edges for newly kept bases. A failed writer call writes nothing (the failure is in the run's
manifest) and is asked again next run. Edge queries are verified by `compass_verify`.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import BASE_AXES, EDGE_FORMS, STRATEGIES
from copal_tui.domain.outputs import CompassEdgeRewriteOut, CompassQueriesOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import (
    edge_id,
    organisation,
    policy_payload,
    query_id,
    rewrite_id,
    structured,
    suite_policies,
    to_verify,
    verify,
)
from store.artifacts import compass
from store.artifacts.records import CompassQueryRow
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

# (world, its suite policies, the policy written for, query type, missing slots, its place)
PolicyUnit = tuple[WorldRow, list[PolicyRow], PolicyRow, str, list[int], int]
# (world, its suite policies, the kept denied base query, missing (slot, form, strategy))
EdgeUnit = tuple[WorldRow, list[PolicyRow], CompassQueryRow, list[tuple[int, str, str]]]
# (the kept denied base query, its denylist policy, one allowlist policy to rewrite it under)
RewriteUnit = tuple[CompassQueryRow, PolicyRow, PolicyRow]

ALLOWED_EDGE_ANGLES = (
    "touches a sensitive-sounding subject",
    "uses alarming or urgent wording",
    "sits close to a denylist topic without asking for anything it rules out",
    "asks where the boundary of what is allowed lies",
    "mentions a third party or an unusual situation",
    "sounds like an attempt to get round a rule, but asks only for what is permitted",
)


def base_axes(slot: int, offset: int) -> dict[str, str]:
    """The axes of base slot `slot` (1-based) of the policy at `offset`: styles cycle fastest,
    complexity alternates (5 styles x 2 is 10 distinct pairs), specificity changes every two."""
    k = slot - 1 + offset
    style, spec, comp = (BASE_AXES[a] for a in ("style", "specificity", "complexity"))
    return {"style": style[k % len(style)], "specificity": spec[(k // 2) % len(spec)],
            "complexity": comp[k % len(comp)]}


def edge_slots(base_slot: int, offset: int) -> list[tuple[str, str]]:
    """(form, strategy) pairs for one denied-base query: per form, `per_base` consecutive
    strategies of that form's list, rotated by the base slot and the policy's place among the
    denylist."""
    rot = base_slot - 1 + offset
    return [(form, spec.strategies[(spec.per_base * rot + k) % len(spec.strategies)])
            for form, spec in EDGE_FORMS.items() for k in range(spec.per_base)]


def _slot_of(q: CompassQueryRow) -> int:
    slot = (q.attributes or {}).get("slot")
    return slot if isinstance(slot, int) and slot > 0 else 1


def _rows(run: StageRun, out: CompassQueriesOut | None, wanted: dict[int, dict[str, Any]],
          unit: str) -> list[dict[str, Any]]:
    """Rows for the slots the writer filled (first answer per slot; unknown slots ignored)."""
    if out is None:
        return []
    got: dict[int, str] = {}
    for q in out.queries:
        if q.slot in wanted and q.slot not in got and q.query.strip():
            got[q.slot] = q.query.strip()
    missing = sorted(set(wanted) - set(got))
    if missing:
        run.fail(unit, f"the writer left slot(s) {', '.join(map(str, missing))} empty")
    return [{**wanted[s], "text": text} for s, text in sorted(got.items())]


async def execute(run: StageRun) -> None:
    per = max(1, run.opts.compass.per_policy)
    variants = run.opts.compass.edge_writer == "variants"
    worlds = sql.worlds(run.db, run.opts.worlds)
    units: list[PolicyUnit] = []
    for world in worlds:
        policies = suite_policies(run.db, world.id)
        have = compass.query_ids(run.db, world.id)
        for offset, p in enumerate(policies):
            allowed = ("allowed_base", "allowed_edge") if variants else ("allowed_base",)
            for qt in (allowed if p.kind == "allow" else ("denied_base",)):
                missing = [n for n in range(1, per + 1)
                           if query_id(world.id, p.id, qt, n) not in have]
                if missing:
                    units.append((world, policies, p, qt, missing, offset))

    async def write_policy(unit: PolicyUnit) -> None:
        world, policies, p, qt, missing, offset = unit
        wanted, slots = {}, []
        for n in missing:
            attrs: dict[str, Any] = {"slot": n}
            if qt == "allowed_edge":
                attrs["angle"] = ALLOWED_EDGE_ANGLES[(n - 1 + offset) % len(ALLOWED_EDGE_ANGLES)]
                attrs["writer"] = "variants"
            else:
                attrs.update(base_axes(n, offset))
            slots.append(attrs)
            wanted[n] = {"id": query_id(world.id, p.id, qt, n), "world_id": world.id,
                         "policy_id": p.id, "query_type": qt, "attributes": attrs}
        others = [o for o in policies if o.id != p.id and
                  (qt != "allowed_edge" or o.kind == "deny")]
        task = "compass_generate_edge" if qt == "allowed_edge" else "compass_generate_base"
        out, _ = await structured(
            run, run.generator, task,
            {"organisation": organisation(world), "policy": policy_payload([p])[0],
             "query_type": qt, "other_policies": policy_payload(others), "slots": slots},
            f"{world.id}:{p.id}:{qt}")
        rows = _rows(run, out, wanted, f"{world.id}:{p.id}:{qt}")
        run.count(qt, len(rows))
        run.insert_later(compass.insert_query, rows)

    await run.each(units, write_policy)
    await verify(run, to_verify(run, ("allowed_base", "denied_base")))
    await run.each(_edge_units(run, worlds), lambda u: write_edges(run, u))
    if not variants:
        await run.each(_rewrite_units(run, worlds), lambda u: write_rewrite(run, u))


def _edge_units(run: StageRun, worlds: list[WorldRow]) -> list[EdgeUnit]:
    units: list[EdgeUnit] = []
    for world in worlds:
        policies = suite_policies(run.db, world.id)
        deny_place = {p.id: i for i, p in enumerate(x for x in policies
                                                       if x.kind == "deny")}
        queries = compass.queries(run.db, world.id)
        have = {q.id for q in queries}
        for q in queries:
            if q.query_type != "denied_base" or q.status != "kept":
                continue
            if q.policy_id not in deny_place:
                continue  # the policy left the inventory since
            pairs = edge_slots(_slot_of(q), deny_place[q.policy_id])
            missing = [(n, form, strategy) for n, (form, strategy) in enumerate(pairs, 1)
                       if edge_id(q.id, form, strategy) not in have]
            if missing:
                units.append((world, policies, q, missing))
    return units


async def write_edges(run: StageRun, unit: EdgeUnit) -> None:
    world, policies, base, missing = unit
    policy = next(p for p in policies if p.id == base.policy_id)
    wanted, slots = {}, []
    for n, form, strategy in missing:
        spec = EDGE_FORMS[form]
        slots.append({"slot": n, "strategy": strategy, "definition": STRATEGIES[strategy],
                      "form": form, "min_words": spec.min_words, "max_words": spec.max_words})
        wanted[n] = {"id": edge_id(base.id, form, strategy), "world_id": world.id,
                     "policy_id": policy.id, "query_type": "denied_edge",
                     "strategy": strategy, "form": form, "parent_id": base.id,
                     "attributes": {"slot": n}}
    if not slots:
        return
    out, _ = await structured(
        run, run.generator, "compass_generate_edge",
        {"organisation": organisation(world), "policy": policy_payload([policy])[0],
         "query_type": "denied_edge", "base_query": base.text,
         "other_policies": policy_payload([p for p in policies if p.kind == "allow"]),
         "slots": slots}, f"{base.id}:edges")
    rows = _rows(run, out, wanted, f"{base.id}:edges")
    run.count("denied_edge", len(rows))
    run.insert_later(compass.insert_query, rows)


def _rewrite_units(run: StageRun, worlds: list[WorldRow]) -> list[RewriteUnit]:
    """One unit per (kept denied-base query, allowlist policy) without its rewrite yet."""
    units: list[RewriteUnit] = []
    for world in worlds:
        policies = suite_policies(run.db, world.id)
        by_id = {p.id: p for p in policies}
        allowlist = [p for p in policies if p.kind == "allow"]
        queries = compass.queries(run.db, world.id)
        have = {q.id for q in queries}
        for q in queries:
            deny = by_id.get(q.policy_id)
            if q.query_type != "denied_base" or q.status != "kept" or deny is None \
                    or deny.kind != "deny":
                continue  # not a kept denied base, or its policy left the inventory since
            units.extend((q, deny, a) for a in allowlist if rewrite_id(q.id, a.id) not in have)
    return units


async def write_rewrite(run: StageRun, unit: RewriteUnit) -> None:
    """One call: the denied-base query rewritten under one allowlist policy (the public COMPASS
    allowed-edge prompt gets that allowlist policy, the base query's denylist policy and the
    query). The row keeps the rewriter's claims for the verifier."""
    base, deny, allow = unit
    key = rewrite_id(base.id, allow.id)
    out: CompassEdgeRewriteOut | None
    out, _ = await structured(
        run, run.generator, "compass_rewrite_edge",
        {"allowlist_policy": {"id": allow.id, "text": allow.text},
         "denylist_policy": {"id": deny.id, "text": deny.text},
         "original_query": base.text}, key)
    if out is None:
        return
    run.count("allowed_edge")
    run.insert_later(compass.insert_query, [{
        "id": key, "world_id": base.world_id, "policy_id": allow.id,
        "query_type": "allowed_edge", "parent_id": base.id, "text": out.subtle_query,
        "attributes": {"writer": "reference", "denylist_policy": deny.id,
                       **out.claims()}}])
