"""Stage `judge`: map each response to its observed handling set H; the error is computed by
code from H (contract mode) or from the policy-level marks (full-policy mode), never taken from
a verdict the judge states.

Contract mode: the judge sees the query, the response and the contract; it marks every contract
item present or absent with a verbatim evidence quote. Full-policy mode: the judge sees only the
world's whole inventory and lists violated and unmet policies.

Both modes ask for the observed facet of an error (how the response actually fails, which can
differ from the item's target facet); it is kept only on an error
(`copal_tui.domain.facets.observed_facet`): a facet named for a correct response is dropped.
"""

from __future__ import annotations

from typing import Any

from copal_tui import prompts
from copal_tui.domain.contract import direction_of, evaluate, item_kinds
from copal_tui.domain.facets import observed_facet
from copal_tui.domain.outputs import (
    TASK_OUTPUTS,
    ContractJudgeOut,
    FullPolicyJudgeOut,
    complete_marks,
)
from copal_tui.domain.taxonomy import JudgeMode
from copal_tui.pipeline.base import StageRun, policy_views, world_payload
from store.artifacts import writes
from store.pipeline import pipeline_sql as sql
from store.pipeline.rows import ResponseToJudge, contract_view


def judgment_id(response_id: str, judge: str, mode: str) -> str:
    return f"{response_id}+{judge}+{mode}"


def contract_marks(out: ContractJudgeOut, resp: ResponseToJudge) -> dict[str, Any]:
    req = [c.id for c in resp.required]
    forb = [c.id for c in resp.forbidden]
    known = set(req) | set(forb)
    marked = {m.id for m in out.marks}
    observed = [m.id for m in out.marks if m.present and m.id in known]
    observed = list(dict.fromkeys(observed))
    evidence = {m.id: m.evidence for m in out.marks if m.present and m.id in known and m.evidence}
    notes = []
    if known - marked:  # the output model refuses this; never read an unmarked item as absent
        raise ValueError(f"unmarked contract items: {', '.join(sorted(known - marked))}")
    if marked - known:
        notes.append(f"ignored marks for unknown ids: {', '.join(sorted(marked - known))}")
    verdict = evaluate(req, forb, observed, item_kinds(contract_view(resp.required)))
    rationale = out.rationale + (f" [{'; '.join(notes)}]" if notes else "")
    return {"observed": observed, "error": verdict.error, "direction": verdict.direction.value,
            "evidence": evidence or None, "facet": observed_facet(verdict.error, out.facet),
            "rationale": rationale}


def policy_marks(out: FullPolicyJudgeOut, policy_kinds: dict[str, str]) -> dict[str, Any]:
    """Full-policy marks. A violated policy, or an unmet procedure (a gate or a route the
    response skipped), is under-enforcement; an unmet allow policy (licensed content withheld)
    is over-enforcement: the same rule as contract items' kinds."""
    violated = [p for p in out.violated_policy_ids if p in policy_kinds]
    unmet = [p for p in out.unmet_policy_ids if p in policy_kinds]
    error = int(bool(violated or unmet))
    over = any(policy_kinds[p] == "allow" for p in unmet)
    under = bool(violated) or any(policy_kinds[p] != "allow" for p in unmet)
    detail = f"violated: {', '.join(violated) or '-'}; unmet: {', '.join(unmet) or '-'}"
    return {"observed": None, "error": error,
            "direction": direction_of(over=over, under=under).value,
            "evidence": {f"E{i}": q for i, q in enumerate(out.evidence, 1)} or None,
            "facet": observed_facet(error, out.facet),
            "rationale": f"{out.rationale} [{detail}]"}


async def execute(run: StageRun) -> None:
    from copal_tui.llm.client import LLMError

    if not run.opts.judges:
        raise ValueError("judge needs at least one --judge")
    units = []
    worlds = {w.id: w for w in sql.worlds(run.db, run.opts.worlds)}
    policies = {wid: policy_views(sql.policies(run.db, wid)) for wid in worlds}
    for wid in worlds:
        for resp in sql.responses_for_items(run.db, wid):
            for judge in run.opts.judges:
                for mode in run.opts.copal.modes:
                    if not sql.judgment_ok(run.db, resp.id, judge, mode):
                        units.append((wid, resp, judge, mode))
    specs = {j: run.model(j) for j in run.opts.judges}

    async def one(unit: tuple[str, ResponseToJudge, str, str]) -> None:
        wid, resp, judge, mode = unit
        out_type: type[Any]
        if mode == JudgeMode.CONTRACT.value:
            task = "judge_contract"
            payload: dict[str, Any] = {"query": resp.query, "response": resp.text,
                                       "required": contract_view(resp.required),
                                       "forbidden": contract_view(resp.forbidden)}
            out_type = complete_marks([c.id for c in (*resp.required, *resp.forbidden)])
        else:
            out_type = TASK_OUTPUTS["judge_full_policy"]
            task = "judge_full_policy"
            payload = {"world": world_payload(worlds[wid]), "query": resp.query,
                       "response": resp.text, "policies": policies[wid]}
        row: dict[str, Any] = {"id": judgment_id(resp.id, judge, mode),
                               "response_id": resp.id, "judge": judge, "mode": mode}
        try:
            tpl = run.template(task)
            result = await run.llm.structured(
                specs[judge], prompts.render(task, payload, using=tpl), out_type,
                task=task, template_version=tpl.version)
        except LLMError as exc:
            if exc.fatal:
                raise
            result = None
            row["failure"] = exc.reason
        if result is not None and result.value is not None:
            if mode == JudgeMode.CONTRACT.value:
                row.update(contract_marks(result.value, resp))
            else:
                row.update(policy_marks(result.value,
                                        {p["id"]: p["kind"] for p in policies[wid]}))
            run.count("judged")
        elif result is not None:
            row["failure"] = f"{result.reason} | raw: {(result.raw or '')[:2000]}"
        if "failure" in row:
            run.fail(row["id"], row["failure"])

        def store(db: Any) -> None:
            sql.delete_failed_judgment(db, resp.id, judge, mode)
            writes.insert_judgment(db, row, run.run_id)

        run.later(store)

    await run.each(units, one)
