"""Stage `judge`: map each response to its observed handling set H; the error is computed by
code from H (contract mode) or from the policy-level marks (full-policy mode), never taken from
a verdict the judge states.

Contract mode: the judge sees the query, the response, the item's active clauses (trigger,
scope, effect, source span) and the contract; it marks every contract item present or absent
with a verbatim evidence quote. A required item the response handles by a scope-resolving
clarification (an acceptable handling in the paper's rubric, B.8) is marked present, flagged
as a clarification. Full-policy mode: the judge sees only the world's whole inventory and lists
violated and unmet policies. Both prompts state the same rubric of acceptable and disallowed
handlings.

Every evidence quote must occur in the response (whitespace and quotation-mark style aside):
the response goes to the judge's answer validation as context, an answer quoting anything else
is invalid and gets the client's repair round, and each such rejection is counted in the run
(`quotes_not_in_response`).

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
from copal_tui.domain.quotes import QUOTE_REJECTED_CONTEXT, RESPONSE_CONTEXT
from copal_tui.domain.taxonomy import JudgeMode
from copal_tui.pipeline.ablate import active_clause_ids
from copal_tui.pipeline.base import StageRun, policy_views, world_payload
from store.artifacts import writes
from store.pipeline import todo as sql
from store.pipeline.rows import ClauseRow, ItemRow, ResponseToJudge, contract_view

# Counted once per judge answer rejected because an evidence quote is not in the response.
QUOTES_NOT_IN_RESPONSE = "quotes_not_in_response"


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
    clarified = [m.id for m in out.marks if m.present and m.clarification and m.id in req]
    if clarified:
        notes.append(f"handled by a scope-resolving clarification: {', '.join(clarified)}")
    if known - marked:  # the output model refuses this; never read an unmarked item as absent
        raise ValueError(f"unmarked contract items: {', '.join(sorted(known - marked))}")
    if marked - known:
        notes.append(f"ignored marks for unknown ids: {', '.join(sorted(marked - known))}")
    verdict = evaluate(req, forb, observed, item_kinds(contract_view(resp.required)))
    rationale = out.rationale + (f" [{'; '.join(notes)}]" if notes else "")
    return {"observed": observed, "error": verdict.error, "direction": verdict.direction.value,
            "evidence": evidence or None, "facet": observed_facet(verdict.error, out.facet),
            "rationale": rationale}


def judged_clauses(item: ItemRow | None, by_id: dict[str, ClauseRow],
                   comps: dict[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """The active clauses the contract judge sees for an item: a composed item's composition
    (or a baseline's planned clauses), a projection's kept clause, plus the clauses its contract
    items cite (a projection keeps one clause of its parent's composition and neutralises the
    others, so those are not active for it)."""
    if item is None:
        return []
    if item.parent_item_id:
        kept = (item.screening or {}).get("kept_clause")
        cited = [c.clause_id for c in (*item.required, *item.forbidden) if c.clause_id]
        ids = list(dict.fromkeys([*([kept] if kept else []), *cited]))
    else:
        ids = active_clause_ids(item, by_id, comps)
        ids += [c.clause_id for c in (*item.required, *item.forbidden)
                if c.clause_id and c.clause_id not in ids]
    return [{"id": c.id, "trigger": c.trigger, "scope": c.scope, "effect": c.effect,
             "source_span": c.source_span} for c in (by_id[i] for i in ids if i in by_id)]


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
    clauses: dict[str, dict[str, list[dict[str, Any]]]] = {}  # world -> item -> active clauses
    for wid in worlds:
        by_id = {c.id: c for c in sql.clauses(run.db, wid)}
        comps = {c.id: c.clause_ids for c in sql.compositions(run.db, wid)}
        items = {i.id: i for i in sql.items(run.db, wid)}
        answered = sql.responses_for_items(run.db, wid)
        clauses[wid] = {iid: judged_clauses(items.get(iid), by_id, comps)
                        for iid in {r.item_id for r in answered}}
        for resp in answered:
            if run.opts.models and resp.model not in run.opts.models:
                continue  # `--model M`: only M's responses are judged
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
                                       "clauses": clauses[wid].get(resp.item_id, []),
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
                task=task, template_version=tpl.version,
                context={RESPONSE_CONTEXT: resp.text,
                         QUOTE_REJECTED_CONTEXT: lambda: run.count(QUOTES_NOT_IN_RESPONSE)})
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
