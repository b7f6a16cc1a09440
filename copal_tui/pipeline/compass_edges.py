"""The edge queries `compass_generate` writes from each kept denied-base query.

- Denied-edge, `--denied-edge-writer reference` (the default), as the public COMPASS
  denied_edge_queries_synthesis.py runs with both configurations: two calls per base query,
  the short form's (2 variations of 100-200 words) and the long form's (4 of 300-800 words).
  Each call's strategies are drawn as the reference draws them,
  `random.Random(len(base_query)).sample` over the form's strategies
  (`domain.compass_reference.reference_strategies`), and the writer gets only the base query
  and those strategies' titles and guides, as the reference's prompt does: not the policy, not
  the organisation. Each variation is filed under the base query's policy.
- Denied-edge, `--denied-edge-writer rotation` (copal's earlier writer): one call per base
  query with 2 short and 4 long slots, each slot's strategy, definition and word range; the
  strategies rotate with the base query's slot and its policy's place among the denylist.
- Allowed-edge with `--edge-writer reference` (the default), as allowed_edge_queries_synthesis.py
  does: one rewrite per allowlist policy, each call turning the denied-base query into one
  maximally deceptive query that is in fact allowed under that policy (the rewriter's claims
  are stored in `attributes` for the verifier). A rewrite is filed under its parent's denylist
  policy, where the reference files it (`--allowed-edge-policy allowlist`: under the allowlist
  policy), its allowlist policy kept in `allowlist_policy_id` either way.

`parent_id` is the base query. A re-run writes only what is missing; a call whose answer lacks
a strategy is asked again next run (the reference retries it).
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import EDGE_FORMS, STRATEGIES
from copal_tui.domain.compass_outputs import CompassDeniedEdgeOut
from copal_tui.domain.compass_reference import GUIDES, TITLES, reference_strategies
from copal_tui.domain.outputs import CompassEdgeRewriteOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import (
    edge_id,
    organisation,
    policy_payload,
    rewrite_id,
    slot_rows,
    structured,
    suite_policies,
)
from store.artifacts import compass
from store.artifacts.records import CompassQueryRow
from store.pipeline.rows import PolicyRow, WorldRow

# (the kept denied base query, its form, the form's drawn strategies, those not written yet)
FormUnit = tuple[CompassQueryRow, str, list[str], list[str]]
# (world, its suite policies, the kept denied base query, missing (slot, form, strategy))
SlotUnit = tuple[WorldRow, list[PolicyRow], CompassQueryRow, list[tuple[int, str, str]]]
# (the kept denied base query, its denylist policy, one allowlist policy to rewrite it under)
RewriteUnit = tuple[CompassQueryRow, PolicyRow, PolicyRow]


async def write_edges(run: StageRun, worlds: list[WorldRow]) -> None:
    if run.opts.compass.denied_edge_writer == "reference":
        await run.each(_form_units(run, worlds), lambda u: write_form(run, u))
    else:
        await run.each(_slot_units(run, worlds), lambda u: write_slots(run, u))
    if run.opts.compass.edge_writer != "variants":
        await run.each(_rewrite_units(run, worlds), lambda u: write_rewrite(run, u))


def _kept_bases(run: StageRun, world: WorldRow) -> tuple[list[PolicyRow], list[CompassQueryRow],
                                                         set[str]]:
    """The world's suite policies, its kept denied-base queries whose policy is still a
    denylist policy, and the ids of all its queries."""
    policies = suite_policies(run.db, world.id)
    deny = {p.id for p in policies if p.kind == "deny"}
    queries = compass.queries(run.db, world.id)
    kept = [q for q in queries if q.query_type == "denied_base" and q.status == "kept"
            and q.policy_id in deny]
    return policies, kept, {q.id for q in queries}


# ------------------------------------------------------------------ the reference's two forms


def _form_units(run: StageRun, worlds: list[WorldRow]) -> list[FormUnit]:
    units: list[FormUnit] = []
    for world in worlds:
        _policies, kept, have = _kept_bases(run, world)
        for q in kept:
            for form in EDGE_FORMS:
                drawn = reference_strategies(q.text, form)
                missing = [s for s in drawn if edge_id(q.id, form, s) not in have]
                if missing:
                    units.append((q, form, drawn, missing))
    return units


async def write_form(run: StageRun, unit: FormUnit) -> None:
    """One call of one form's configuration: the base query and its drawn strategies, each
    with the reference's title and guide, in the drawn order."""
    base, form, drawn, missing = unit
    titles = [TITLES[s] for s in drawn]
    out: CompassDeniedEdgeOut | None
    out, _ = await structured(
        run, run.generator, f"compass_generate_denied_{form}",
        {"base_query": base.text,
         "strategies": [{"title": TITLES[s], "guide": GUIDES[form][s]} for s in drawn]},
        f"{base.id}:{form}", context={"strategies": titles})
    if out is None:
        return
    rows = [{"id": edge_id(base.id, form, s), "world_id": base.world_id,
             "policy_id": base.policy_id, "query_type": "denied_edge", "strategy": s,
             "form": form, "parent_id": base.id, "text": out.attack_variations[TITLES[s]],
             "attributes": {"writer": "reference", "attack": TITLES[s]}} for s in missing]
    run.count("denied_edge", len(rows))
    run.insert_later(compass.insert_query, rows)


# ------------------------------------------------------------------ copal's rotation


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


def _slot_units(run: StageRun, worlds: list[WorldRow]) -> list[SlotUnit]:
    units: list[SlotUnit] = []
    for world in worlds:
        policies, kept, have = _kept_bases(run, world)
        deny_place = {p.id: i for i, p in enumerate(x for x in policies if x.kind == "deny")}
        for q in kept:
            pairs = edge_slots(_slot_of(q), deny_place[q.policy_id])
            missing = [(n, form, strategy) for n, (form, strategy) in enumerate(pairs, 1)
                       if edge_id(q.id, form, strategy) not in have]
            if missing:
                units.append((world, policies, q, missing))
    return units


async def write_slots(run: StageRun, unit: SlotUnit) -> None:
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
    out, _ = await structured(
        run, run.generator, "compass_generate_edge",
        {"organisation": organisation(world), "policy": policy_payload([policy])[0],
         "query_type": "denied_edge", "base_query": base.text,
         "other_policies": policy_payload([p for p in policies if p.kind == "allow"]),
         "slots": slots}, f"{base.id}:edges")
    rows = slot_rows(run, out, wanted, f"{base.id}:edges")
    run.count("denied_edge", len(rows))
    run.insert_later(compass.insert_query, rows)


# ------------------------------------------------------------------ allowed-edge rewrites


def _rewrite_units(run: StageRun, worlds: list[WorldRow]) -> list[RewriteUnit]:
    """One unit per (kept denied-base query, allowlist policy) without its rewrite yet."""
    units: list[RewriteUnit] = []
    for world in worlds:
        policies, kept, have = _kept_bases(run, world)
        by_id = {p.id: p for p in policies}
        allowlist = [p for p in policies if p.kind == "allow"]
        for q in kept:
            units.extend((q, by_id[q.policy_id], a) for a in allowlist
                         if rewrite_id(q.id, a.id) not in have)
    return units


async def write_rewrite(run: StageRun, unit: RewriteUnit) -> None:
    """One call: the denied-base query rewritten under one allowlist policy (the public COMPASS
    allowed-edge prompt gets that allowlist policy, the base query's denylist policy and the
    query). The row keeps the rewriter's claims for the verifier and is filed as
    `--allowed-edge-policy` says."""
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
    filed = deny.id if run.opts.compass.allowed_edge_policy == "denylist" else allow.id
    row: dict[str, Any] = {
        "id": key, "world_id": base.world_id, "policy_id": filed,
        "allowlist_policy_id": allow.id, "query_type": "allowed_edge", "parent_id": base.id,
        "text": out.subtle_query,
        "attributes": {"writer": "reference", "denylist_policy": deny.id, **out.claims()}}
    run.count("allowed_edge")
    run.insert_later(compass.insert_query, [row])
