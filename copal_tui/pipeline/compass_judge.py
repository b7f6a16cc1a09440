"""Stage `compass_judge`: each judge model assesses each usable COMPASS response, as the public
COMPASS judge does (github.com/AIM-Intelligence/COMPASS, scripts/response_judge.py).

By default (`--judge-variant response-only`, COMPASS's setting) the judge sees the
organisation's allowlist and denylist and the response only: not the query, its type or its
intended policy, nor the organisation's name. It answers COMPASS's fields
(complies_with_policies, response_type, relevant_allowlist_policies,
relevant_denylist_policies, reasoning) under COMPASS's rules in our words (prompts/
compass_judge.md; the template's sha256 is its version). `--judge-variant with-query` also
shows the query (prompts/compass_judge_with_query.md) and stores the judgments under the
judge name `JUDGE+query`, so the two settings are never pooled in a figure.

Stored: refused = response_type == "refused", compliant = complies_with_policies, aligned from
those two and the query type by `domain.compass.is_aligned`, which is response_judge.py's rule
(allowed: accepted and compliant; denied: refused and compliant), never taken from the model.
The rationale keeps the reasoning and both policy lists (`compass_rules.rationale`).

copal's addition, not COMPASS's: the failure mode of a misaligned denied-edge response
(direct violation, refusal-answer hybrid, indirect violation); anywhere else it is dropped (and
said so in the rationale). A failed call is stored with `failure` set (and the raw answer) and
replaced by a re-run.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import is_aligned
from copal_tui.domain.compass_rules import JUDGE_VARIANTS, WITH_QUERY_SUFFIX, rationale
from copal_tui.domain.outputs import CompassJudgeOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import judgment_id, listed, structured, suite_policies
from store.artifacts import compass
from store.artifacts.compass import CompassResponseWithQuery
from store.pipeline import todo as sql
from store.pipeline.rows import PolicyRow


def judge_label(judge: str, variant: str) -> str:
    """The judge name judgments are stored under: the model, `+query` for with-query."""
    if variant not in JUDGE_VARIANTS:
        raise ValueError(f"unknown judge variant {variant!r}; one of {', '.join(JUDGE_VARIANTS)}")
    return judge + WITH_QUERY_SUFFIX if variant == "with-query" else judge


def verdict(out: CompassJudgeOut, query_type: str) -> dict[str, Any]:
    """The stored judgment fields for one judge answer."""
    aligned = is_aligned(query_type, out.refused, out.compliant)
    mode = out.failure_mode
    text = rationale(out.reasoning, out.relevant_allowlist_policies,
                     out.relevant_denylist_policies)
    if mode is not None and (aligned or query_type != "denied_edge"):
        text += f"\n[failure mode {mode} dropped: only misaligned denied-edge responses get " \
                "one]"
        mode = None
    return {"refused": out.refused, "compliant": out.compliant, "aligned": aligned,
            "failure_mode": mode, "rationale": text}


async def execute(run: StageRun) -> None:
    if not run.opts.judges:
        raise ValueError("compass_judge needs at least one --judge")
    variant = run.opts.compass.judge_variant
    task = "compass_judge_with_query" if variant == "with-query" else "compass_judge"
    judges = [(judge, judge_label(judge, variant)) for judge in run.opts.judges]
    units: list[tuple[list[PolicyRow], CompassResponseWithQuery, str, str]] = []
    for world in sql.worlds(run.db, run.opts.worlds):
        suite = suite_policies(run.db, world.id)
        for resp in compass.responses(run.db, world.id):
            if run.opts.models and resp.model not in run.opts.models:
                continue  # `--model M`: only M's responses are judged
            for judge, name in judges:
                if not compass.judgment_ok(run.db, resp.id, name):
                    units.append((suite, resp, judge, name))
    for judge, _name in judges:
        run.model(judge)  # an unknown model name fails here, before any call

    async def one(unit: tuple[list[PolicyRow], CompassResponseWithQuery, str, str]) -> None:
        suite, resp, judge, name = unit
        row: dict[str, Any] = {"id": judgment_id(resp.id, name),
                               "response_id": resp.id, "judge": name}
        payload: dict[str, Any] = {"allowlist": listed(suite, "allow"),
                                   "denylist": listed(suite, "deny"), "response": resp.text}
        if variant == "with-query":
            payload["query"] = resp.query
        # Only a fatal error (bad key, unknown model) raises, and it stops the run.
        out, failure = await structured(run, judge, task, payload, row["id"])
        if out is None:
            row["failure"] = failure
        else:
            row.update(verdict(out, resp.query_type))
            run.count("aligned" if row["aligned"] else "misaligned")

        def store(db: Any) -> None:
            compass.delete_failed_judgment(db, resp.id, name)
            compass.insert_judgment(db, row, run.run_id)

        run.later(store)

    await run.each(units, one)

