"""Stage `traffic_judge`: the real-traffic audit's automatic labeller. Each judge model labels
each stored pair in scope as an annotator does: its policy category (none, single, multi),
whether the response is erroneous, the policies that apply and why (prompts/traffic_judge.md).

Scope (`TrafficOptions`): every pair whose text is stored, of the sources asked (`--source`,
all when none), and with `--sampled` only the pairs drawn into some traffic campaign (enough for
the judge's agreement with the humans; the corrected estimate of the whole log's mix needs the
whole log). One call per (pair, judge). The judge sees the organisation (name, industry, use
case) and its policies (id, kind, text) when the pair's import is linked to a world; otherwise
neither, and it decides the category from the text alone. The pair's earlier turns go as
`context`.

What is stored, one row per pair and judge (`traffic_judgments`, with the run id): the answer's
category and verdict, the policies it named that the input offered (ids it invented are
dropped, as the full-policy judge drops them, and said in the run's notes), and its reason; or,
when no valid answer came after the repair round, the failure with the raw answer. A pair done
by a judge is skipped by a re-run; a failed one is asked again and its row replaced.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.traffic_outputs import TrafficJudgeOut
from copal_tui.pipeline.base import StageRun, policy_views
from copal_tui.pipeline.compass_common import structured
from store.artifacts import traffic
from store.pipeline import todo
from store.pipeline import traffic as tsql
from store.pipeline.traffic import PairToJudge

TASK = "traffic_judge"

# What the judge is shown of a linked world: the organisation and its policies.
Shown = tuple[dict[str, str] | None, list[dict[str, str]]]


def shown_worlds(run: StageRun, world_ids: set[str]) -> dict[str, Shown]:
    """The organisation and policy views of each linked world, read once per world."""
    out: dict[str, Shown] = {}
    for world in todo.worlds(run.db, sorted(world_ids)):
        out[world.id] = ({"name": world.name, "industry": world.industry,
                          "use_case": world.use_case},
                         policy_views(todo.policies(run.db, world.id)))
    return out


def payload(pair: PairToJudge, shown: Shown | None) -> dict[str, Any]:
    organisation, policies = shown if shown is not None else (None, [])
    return {"organisation": organisation, "policies": policies,
            "context": [{"role": role, "content": text} for role, text in pair.context],
            "query": pair.query, "response": pair.response}


async def execute(run: StageRun) -> None:
    if not run.opts.judges:
        raise ValueError("traffic_judge needs at least one --judge")
    opts = run.opts.traffic
    for judge in run.opts.judges:
        run.model(judge)  # an unknown model name fails here, before any call
    units: list[tuple[PairToJudge, str]] = []
    for judge in run.opts.judges:
        units += [(p, judge) for p in tsql.pairs_to_judge(
            run.db, judge, sources=opts.sources or (), sampled=opts.sampled)]
    worlds = shown_worlds(run, {p.world_id for p, _j in units if p.world_id is not None})

    async def one(unit: tuple[PairToJudge, str]) -> None:
        pair, judge = unit
        shown = worlds.get(pair.world_id) if pair.world_id is not None else None
        name = f"{pair.id}+{judge}"
        # Only a fatal error (bad key, unknown model) raises, and it stops the run.
        out, failure = await structured(run, judge, TASK, payload(pair, shown), name)
        row: dict[str, Any] = {"category": None, "erroneous": None, "policies": None,
                               "reason": None, "failure": failure}
        if isinstance(out, TrafficJudgeOut):
            offered = {p["id"] for p in (shown[1] if shown is not None else [])}
            named = [p for p in out.policies if p in offered]
            invented = [p for p in out.policies if p not in offered]
            if invented:
                run.count("unknown_policy_ids", len(invented))
                run.errors.append({"unit": name, "reason": f"note: ignored policy ids the "
                                   f"input did not offer: {', '.join(invented)}"[:500]})
            row.update(category=out.category, erroneous=out.erroneous, policies=named,
                       reason=out.reason)
            run.count(f"category_{out.category}")
            run.count("erroneous" if out.erroneous else "not_erroneous")

        def store(db: Any) -> None:
            traffic.replace_judgment(db, pair_id=pair.id, judge=judge, run_id=run.run_id,
                                     **row)

        run.later(store)

    await run.each(units, one)
