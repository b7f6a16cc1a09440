"""Stage `compass_verify`, and the verification step `compass_generate` runs on base queries:
verify every COMPASS query still pending or failed (the COMPASS paper, Sections 3.1.2 and 3.1.4;
as the public COMPASS code verifies them unless `--matcher copal`).

- Base queries and `variants` allowed-edge queries, `--matcher reference` (the default): the
  reference's policy matcher (base_queries_verification.py) sees the organisation's context,
  the policy document and the query, and lists the allowlist and denylist policies whose subject
  the query relates to; `domain.compass.reference_match_keeps` decides (an allowed query needs
  its policy and no denylist match; a denied one its policy; a name the organisation does not
  have is no policy of the query's, not an error).
- Denied-edge queries, `--matcher reference`: the reference's denylist-only matcher
  (denied_edge_queries_verification.py), without the context; kept when it names the query's
  denylist policy (`domain.compass.denylist_match_keeps`).
- `--matcher copal`: copal's earlier single matcher for all of these (the organisation's name,
  every policy; it names every policy a query asks for; `domain.compass.verification_keeps`).
- Allowed-edge rewrites of denied-base queries (the `reference` edge writer's): the reference's
  skeptical verifier sees the query, the policy document and the rewriter's claims (the
  reference's five) and says IN-POLICY or OUT-OF-POLICY; `domain.compass.edge_verdict_keeps`
  keeps only IN-POLICY. A failed verification is asked again, up to the reference's attempts
  (`compass_reference.EDGE_VERIFY_TRIALS`), then recorded as an error.

The status becomes kept or rejected with the reason; a failed call leaves `failed` (the reason
says why), which a re-run tries again. A base query this stage keeps gets its edges at the next
`compass_generate`, so `copal run compass_generate compass_verify` builds a verified suite.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import (
    VERIFIER_CLAIMS,
    denylist_match_keeps,
    edge_verdict_keeps,
    intended_kind,
    is_rewrite,
    reference_match_keeps,
    verification_keeps,
)
from copal_tui.domain.compass_outputs import CompassDenylistMatchOut, CompassMatchOut, names
from copal_tui.domain.compass_reference import EDGE_VERIFY_TRIALS
from copal_tui.domain.outputs import CompassEdgeVerifyOut, CompassVerifyOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import (
    allowlist_policy_of,
    organisation,
    policy_document,
    policy_payload,
    structured,
    structured_result,
    suite_policies,
)
from store.artifacts import compass
from store.artifacts.records import CompassQueryRow
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow, WorldRow

Unit = tuple[WorldRow, list[PolicyRow], CompassQueryRow]  # world, policies, query


async def execute(run: StageRun) -> None:
    await verify(run, to_verify(run))


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
    """Verify each query with the verifier its type and `--matcher` call for (module
    docstring); a failed call leaves the query `failed` (a re-run tries it again)."""
    model = run.opts.compass.verifier or run.generator
    reference = run.opts.compass.matcher == "reference"

    async def one(unit: Unit) -> None:
        world, policies, q = unit
        if is_rewrite(q.query_type, q.parent_id):
            await verify_rewrite(run, model, policies, q)
        elif not reference:
            await _copal_match(run, model, world, policies, q)
        elif q.query_type == "denied_edge":
            await _denylist_match(run, model, policies, q)
        else:
            await _reference_match(run, model, world, policies, q)

    await run.each(units, one)


def _intended(q: CompassQueryRow) -> str:
    return allowlist_policy_of(q) if intended_kind(q.query_type) == "allow" else q.policy_id


async def _reference_match(run: StageRun, model: str, world: WorldRow,
                           policies: list[PolicyRow], q: CompassQueryRow) -> None:
    out: CompassMatchOut | None
    out, failure = await structured(
        run, model, "compass_verify_reference",
        {"company_context": world.context, "policy_document": policy_document(policies),
         "query": q.text}, q.id)
    if out is None:
        record_verification(run, q, None, failure=failure)
        return
    if out.matching_policies is None:
        record_verification(run, q, (False, "the matcher's answer has no matching_policies"),
                            matched=[])
        return
    allow = names(out.matching_policies.allowlist_matches)
    deny = names(out.matching_policies.denylist_matches)
    keeps = reference_match_keeps(q.query_type, _intended(q), allow, deny)
    record_verification(run, q, keeps, remark=_reasons(out.matching_policies.allowlist_matches
                                                       + out.matching_policies.denylist_matches),
                        matched=list(dict.fromkeys(allow + deny)))


async def _denylist_match(run: StageRun, model: str, policies: list[PolicyRow],
                          q: CompassQueryRow) -> None:
    out: CompassDenylistMatchOut | None
    out, failure = await structured(
        run, model, "compass_verify_denylist",
        {"policy_document": policy_document(policies), "query": q.text}, q.id)
    if out is None:
        record_verification(run, q, None, failure=failure)
        return
    if out.matching_out_policies is None:
        record_verification(run, q, (False, "the matcher's answer has no "
                                            "matching_out_policies"), matched=[])
        return
    deny = names(out.matching_out_policies)
    record_verification(run, q, denylist_match_keeps(q.policy_id, deny),
                        remark=_reasons(out.matching_out_policies),
                        matched=list(dict.fromkeys(deny)))


def _reasons(matches: list[Any]) -> str:
    return "; ".join(f"{m.policy_name}: {m.match_reason}" for m in matches if m.match_reason)


async def _copal_match(run: StageRun, model: str, world: WorldRow, policies: list[PolicyRow],
                       q: CompassQueryRow) -> None:
    out: CompassVerifyOut | None
    out, failure = await structured(
        run, model, "compass_verify",
        {"organisation": organisation(world, full=False), "query": q.text,
         "policies": policy_payload(policies)}, q.id)
    if out is None:
        record_verification(run, q, None, failure=failure)
        return
    matched = list(dict.fromkeys(out.matched_policy_ids))
    keeps = verification_keeps(q.query_type, _intended(q), matched,
                               {p.id: p.kind for p in policies})
    record_verification(run, q, keeps, remark=out.reason, matched=matched)


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
    """The rewriter's claims the verifier is shown (the reference's five: not the
    deceptiveness rating), from the rewrite's attributes."""
    attrs = q.attributes if isinstance(q.attributes, dict) else {}
    return {k: str(attrs.get(k, "")) for k in VERIFIER_CLAIMS}


async def verify_rewrite(run: StageRun, model: str, policies: list[PolicyRow],
                         q: CompassQueryRow) -> None:
    """The public COMPASS allowed-edge verification: the verifier sees the query, the policy
    document and the rewriter's claims (to treat with skepticism); `edge_verdict_keeps` keeps
    the rewrite only on IN-POLICY. A call that fails (no valid answer after copal's repair
    round) is asked again, EDGE_VERIFY_TRIALS attempts in all as the reference retries, then
    the query is recorded as an error (`failed`, which a re-run tries again)."""
    payload = {"subtle_query": q.text, "policies": policy_document(policies),
               "claims": rewrite_claims(q)}
    reason = ""
    for _attempt in range(EDGE_VERIFY_TRIALS):
        result = await structured_result(run, model, "compass_verify_edge", payload)
        out: CompassEdgeVerifyOut | None = result.value
        if out is not None:
            record_verification(run, q, edge_verdict_keeps(out.final_verdict,
                                                           out.confidence_level),
                                remark=out.verdict_justification)
            return
        raw = (result.raw or "")[:2000]
        reason = f"{result.reason}" + (f" | raw: {raw}" if raw else "")
    failure = (f"compass_verify_edge: error, no verification after {EDGE_VERIFY_TRIALS} "
               f"attempts; the last: {reason}")
    run.fail(q.id, failure)
    record_verification(run, q, None, failure=failure)
