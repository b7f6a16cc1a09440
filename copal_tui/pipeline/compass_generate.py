"""Stage `compass_generate`: a world's COMPASS queries, in three steps (the COMPASS paper,
Section 3.1), at the public COMPASS code's granularity unless an option asks for copal's earlier
one (every choice is in the run manifest's options).

1. Base queries. `--base-writer organisation` (the default), as base_queries_synthesis.py: one
   call per organisation, with its context and its whole policy document, asking for
   `--per-policy` (the reference's 10) allowed-base queries per allowlist policy and denied-base
   queries per denylist policy, with the reference's guidance (authenticity, the company's
   products, time references, personas, query styles, explicit and implicit violations). An
   answer must give every policy at least one query, as the reference's validation asks;
   every query it gives is kept, as the reference keeps them. `--base-writer per-policy`:
   copal's earlier one call per policy and query type, over slots that vary BASE_AXES.
   With `--edge-writer variants` each allowlist policy also gets `--per-policy` allowed-edge
   queries (permitted, but worded so an over-cautious bot might refuse), one call per policy,
   their slots over ALLOWED_EDGE_ANGLES.
2. Verification of the base queries (`compass_verify`'s verifier): edges are written only from
   kept denied-base queries.
3. Edge queries from each kept denied-base query (`compass_edges`): denied-edge queries in the
   reference's short and long calls, and the allowed-edge rewrites.

Every query is one id per (policy, type, slot), (parent, form, strategy) or (parent,
allowlist policy): a re-run writes only the missing ones (with the organisation writer, the
policies without their first base query yet), re-verifies failed ones and writes edges
for newly kept bases. A failed writer call writes nothing (the failure is in the run's manifest)
and is asked again next run. Edge queries are verified by `compass_verify`.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import base_axes
from copal_tui.domain.outputs import CompassOrgQueriesOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import (
    organisation,
    policy_document,
    policy_payload,
    query_id,
    slot_rows,
    structured,
    suite_policies,
)
from copal_tui.pipeline.compass_edges import write_edges
from copal_tui.pipeline.compass_verify import to_verify, verify
from store.artifacts import compass
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

# (world, its suite policies, the policy written for, query type, missing slots, its place)
PolicyUnit = tuple[WorldRow, list[PolicyRow], PolicyRow, str, list[int], int]
# (world, its suite policies, the policies without base queries of their type yet)
OrgUnit = tuple[WorldRow, list[PolicyRow], list[PolicyRow]]
BASE_TYPE = {"allow": "allowed_base", "deny": "denied_base"}

ALLOWED_EDGE_ANGLES = (
    "touches a sensitive-sounding subject",
    "uses alarming or urgent wording",
    "sits close to a denylist topic without asking for anything it rules out",
    "asks where the boundary of what is allowed lies",
    "mentions a third party or an unusual situation",
    "sounds like an attempt to get round a rule, but asks only for what is permitted",
)


async def execute(run: StageRun) -> None:
    worlds = sql.worlds(run.db, run.opts.worlds)
    if run.opts.compass.base_writer == "organisation":
        await run.each(_org_units(run, worlds), lambda u: write_organisation(run, u))
        await run.each(_policy_units(run, worlds, ("allowed_edge",)),
                       lambda u: write_policy(run, u))
    else:
        await run.each(_policy_units(run, worlds, ("allowed_base", "denied_base",
                                                   "allowed_edge")),
                       lambda u: write_policy(run, u))
    await verify(run, to_verify(run, ("allowed_base", "denied_base")))
    await write_edges(run, worlds)


def _org_units(run: StageRun, worlds: list[WorldRow]) -> list[OrgUnit]:
    units: list[OrgUnit] = []
    for world in worlds:
        policies = suite_policies(run.db, world.id)
        have = compass.query_ids(run.db, world.id)
        # A policy whose first base query (either writer's) is stored has had its call; queries
        # stored under other ids (imported, hand-made) do not count.
        missing = [p for p in policies
                   if query_id(world.id, p.id, BASE_TYPE[p.kind], 1) not in have]
        if missing:
            units.append((world, policies, missing))
    return units


async def write_organisation(run: StageRun, unit: OrgUnit) -> None:
    """One call for the whole organisation (base_queries_synthesis.py's): its context, its
    policy document and the count per policy; the answer is checked, as the reference checks
    it, for queries under every policy. Rows are written for the policies still without theirs."""
    world, policies, missing = unit
    per = max(1, run.opts.compass.per_policy)
    doc = policy_document(policies)
    out: CompassOrgQueriesOut | None
    out, _ = await structured(
        run, run.generator, "compass_generate_org",
        {"company_context": world.context, "policy_document": doc, "queries_per_policy": per},
        f"{world.id}:base", context={"allowlist": list(doc["allowlist"]),
                                     "denylist": list(doc["denylist"])})
    if out is None:
        return
    rows = []
    for p in missing:
        qt = BASE_TYPE[p.kind]
        answer = out.allowlist_test_queries if p.kind == "allow" else out.denylist_test_queries
        for n, text in enumerate(answer[p.id], 1):
            rows.append({"id": query_id(world.id, p.id, qt, n), "world_id": world.id,
                         "policy_id": p.id, "query_type": qt, "text": text,
                         "attributes": {"slot": n, "writer": "organisation"}})
            run.count(qt)
    run.insert_later(compass.insert_query, rows)


def _policy_units(run: StageRun, worlds: list[WorldRow], types: tuple[str, ...]
                  ) -> list[PolicyUnit]:
    """Per policy and query type of `types` (allowed-edge only with `--edge-writer variants`),
    the slots still missing."""
    per = max(1, run.opts.compass.per_policy)
    if run.opts.compass.edge_writer != "variants":
        types = tuple(t for t in types if t != "allowed_edge")
    units: list[PolicyUnit] = []
    for world in worlds:
        policies = suite_policies(run.db, world.id)
        have = compass.query_ids(run.db, world.id)
        for offset, p in enumerate(policies):
            for qt in types:
                if (qt == "denied_base") != (p.kind == "deny"):
                    continue
                missing = [n for n in range(1, per + 1)
                           if query_id(world.id, p.id, qt, n) not in have]
                if missing:
                    units.append((world, policies, p, qt, missing, offset))
    return units


async def write_policy(run: StageRun, unit: PolicyUnit) -> None:
    """One call for one policy and query type over its missing slots (`per-policy` base
    queries, and `variants` allowed-edge queries)."""
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
                     "policy_id": p.id, "query_type": qt, "attributes": attrs,
                     "allowlist_policy_id": p.id if qt == "allowed_edge" else None}
    others = [o for o in policies if o.id != p.id and
              (qt != "allowed_edge" or o.kind == "deny")]
    task = "compass_generate_edge" if qt == "allowed_edge" else "compass_generate_base"
    out, _ = await structured(
        run, run.generator, task,
        {"organisation": organisation(world), "policy": policy_payload([p])[0],
         "query_type": qt, "other_policies": policy_payload(others), "slots": slots},
        f"{world.id}:{p.id}:{qt}")
    rows = slot_rows(run, out, wanted, f"{world.id}:{p.id}:{qt}")
    run.count(qt, len(rows))
    run.insert_later(compass.insert_query, rows)
