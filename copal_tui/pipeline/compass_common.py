"""What the COMPASS stages share: a world's two lists, payloads, deterministic ids, one
structured call that reports its failure reason, and the verification step (the policy
matcher for base, denied-edge and `variants` allowed-edge queries; the skeptical in-policy
verifier for allowed-edge rewrites).

Ids are built from what a row is (world, policy, query type, slot; parent, form, strategy;
parent, allowlist policy; query, model, variant; response, judge), never from a counter or the
clock, so the same input always maps to the same id and every stage skips what already exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from copal_tui import prompts
from copal_tui.domain.compass import (
    REWRITE_CLAIMS,
    edge_verdict_keeps,
    is_rewrite,
    verification_keeps,
)
from copal_tui.domain.outputs import TASK_OUTPUTS, CompassEdgeVerifyOut, CompassVerifyOut
from copal_tui.pipeline.base import StageRun, policy_views, world_payload
from store.artifacts import compass
from store.artifacts.records import CompassQueryRow
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

if TYPE_CHECKING:
    from copal_tui.llm.results import Structured

SUITE_KINDS = ("allow", "deny")  # procedure policies are not part of a COMPASS suite
_CODES = {"allowed_base": "ab", "denied_base": "db", "allowed_edge": "ae"}


# ------------------------------------------------------------------ ids


def query_id(world_id: str, policy_id: str, query_type: str, slot: int) -> str:
    return f"{world_id}:{policy_id}:{_CODES[query_type]}{slot:02d}"


def edge_id(parent_id: str, form: str, strategy: str) -> str:
    return f"{parent_id}:{form}:{strategy}"


def rewrite_id(parent_id: str, allow_policy_id: str) -> str:
    """The allowed-edge rewrite of denied-base query `parent_id` under one allowlist policy."""
    return f"{parent_id}:ae:{allow_policy_id}"


def response_id(query_id: str, model: str, variant: str) -> str:
    return f"{query_id}@{model}+{variant}"


def judgment_id(response_id: str, judge: str) -> str:
    return f"{response_id}+{judge}"


# ------------------------------------------------------------------ worlds and payloads


def suite_policies(db: Any, world_id: str) -> list[PolicyRow]:
    """The world's allowlist and denylist, in inventory order."""
    return [p for p in sql.policies(db, world_id) if p.kind in SUITE_KINDS]


def organisation(world: WorldRow, *, full: bool = True) -> dict[str, str]:
    """The organisation as a task sees it: with its context for writers, name only for
    checkers (the context can be pages long and does not change what a policy rules out)."""
    return world_payload(world) if full else {"id": world.id, "name": world.name}


def listed(policies: list[PolicyRow], kind: str) -> list[dict[str, str]]:
    return [{"id": p.id, "text": p.text} for p in policies if p.kind == kind]


def policy_payload(policies: list[PolicyRow]) -> list[dict[str, str]]:
    return policy_views(policies)


# ------------------------------------------------------------------ calls


async def structured_result(run: StageRun, model: str, task: str, payload: dict[str, Any],
                            context: Mapping[str, Any] | None = None) -> Structured[Any]:
    """One validated call's whole result (the value, or the raw text and reason; the first
    answer's text when the repair round was used), nothing recorded."""
    tpl = run.template(task)
    return await run.llm.structured(
        run.model(model), prompts.render(task, payload, using=tpl), TASK_OUTPUTS[task],
        task=task, template_version=tpl.version, context=context)


async def structured(run: StageRun, model: str, task: str, payload: dict[str, Any],
                     unit: str) -> tuple[Any, str | None]:
    """One validated call: (value, None), or (None, reason) with the failure recorded.
    A fatal error (bad key, unknown model) is raised and stops the run."""
    result = await structured_result(run, model, task, payload)
    if result.value is None:
        raw = (result.raw or "")[:2000]
        reason = f"{task}: {result.reason}" + (f" | raw: {raw}" if raw else "")
        run.fail(unit, reason)
        return None, reason
    return result.value, None


# ------------------------------------------------------------------ verification

Unit = tuple[WorldRow, list[PolicyRow], CompassQueryRow]  # world, policies, query


def to_verify(run: StageRun, query_types: tuple[str, ...] | None = None) -> list[Unit]:
    """Queries of the run's worlds still pending, or failed in an earlier verification."""
    units: list[Unit] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        policies = suite_policies(run.db, world.id)
        for q in compass.queries(run.db, world.id):
            if q.status in ("pending", "failed") and (
                    query_types is None or q.query_type in query_types):
                units.append((world, policies, q))
    return units


async def verify(run: StageRun, units: list[Unit]) -> None:
    """The verifier names every policy a query falls under; the domain rule keeps or rejects
    it. An allowed-edge rewrite goes to the in-policy verifier instead (`verify_rewrite`). A
    failed call leaves the query `failed` (a re-run tries it again)."""
    model = run.opts.compass.verifier or run.generator

    async def one(unit: Unit) -> None:
        world, policies, q = unit
        if is_rewrite(q.query_type, q.parent_id):
            await verify_rewrite(run, model, policies, q)
            return
        out: CompassVerifyOut | None
        out, failure = await structured(
            run, model, "compass_verify",
            {"organisation": organisation(world, full=False), "query": q.text,
             "policies": policy_payload(policies)}, q.id)
        if out is None:
            record_verification(run, q, None, failure=failure)
            return
        matched = list(dict.fromkeys(out.matched_policy_ids))
        keeps = verification_keeps(q.query_type, q.policy_id, matched,
                                   {p.id: p.kind for p in policies})
        record_verification(run, q, keeps, remark=out.reason, matched=matched)

    await run.each(units, one)


def record_verification(run: StageRun, q: CompassQueryRow, verdict: tuple[bool, str] | None,
                        *, failure: str | None = None, remark: str = "",
                        matched: list[str] | None = None) -> None:
    """Record a verification once the run writes. With the domain rule's `verdict` (keep,
    reason) the query is kept or rejected, the verifier's own `remark` appended to the reason,
    and counted; without one (a failed call) it is left `failed` with the call's `failure`, so
    a re-run tries it again. `matched`: the policies the matcher named (None from the in-policy
    verifier)."""
    if verdict is None:
        status, reason = "failed", failure
    else:
        keep, reason = verdict
        status = "kept" if keep else "rejected"
        if remark:
            reason += f" (verifier: {remark[:500]})"
        run.count(status)

    def store(db: Any) -> None:
        compass.set_verification(db, q.id, status, matched, reason, run.run_id)

    run.later(store)


def rewrite_claims(q: CompassQueryRow) -> dict[str, str]:
    """The rewriter's claims stored with a rewrite (in its attributes), as the verifier is
    shown them."""
    attrs = q.attributes if isinstance(q.attributes, dict) else {}
    return {k: str(attrs[k]) for k in REWRITE_CLAIMS if k in attrs}


async def verify_rewrite(run: StageRun, model: str, policies: list[PolicyRow],
                         q: CompassQueryRow) -> None:
    """The public COMPASS allowed-edge verification: the verifier sees the query, every policy
    and the rewriter's claims (to treat with skepticism); `edge_verdict_keeps` keeps the
    rewrite only on IN-POLICY."""
    out: CompassEdgeVerifyOut | None
    out, failure = await structured(
        run, model, "compass_verify_edge",
        {"query": q.text, "policies": policy_payload(policies), "claims": rewrite_claims(q)},
        q.id)
    if out is None:
        record_verification(run, q, None, failure=failure)
        return
    record_verification(run, q, edge_verdict_keeps(out.final_verdict, out.confidence_level),
                        remark=out.verdict_justification)
