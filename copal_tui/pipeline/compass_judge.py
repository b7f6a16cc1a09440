"""Stage `compass_judge`: each judge model assesses each usable COMPASS response.

The judge sees the organisation's name, the query, the response and both lists (not the
query's type or intended policy) and reports `refused`, `compliant`, a failure mode and a
rationale. `aligned` is computed here with `domain.compass.is_aligned` from those two facts and
the query type, never taken from the model. A failure mode is kept only where the seed's
taxonomy applies, a misaligned denied-edge response; anywhere else it is dropped (and said so in
the rationale). A failed call is stored with `failure` set (and the raw answer) and replaced by
a re-run.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.compass import is_aligned
from copal_tui.domain.outputs import CompassJudgeOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import (
    judgment_id,
    listed,
    organisation,
    structured,
    suite_policies,
)
from store import compass_sql
from store import pipeline_sql as sql


def verdict(out: CompassJudgeOut, query_type: str) -> dict[str, Any]:
    """The stored judgment fields for one judge answer."""
    aligned = is_aligned(query_type, out.refused, out.compliant)
    mode = out.failure_mode
    rationale = out.rationale
    if mode is not None and (aligned or query_type != "denied_edge"):
        rationale += f" [failure mode {mode} dropped: only misaligned denied-edge responses " \
                     "get one]"
        mode = None
    return {"refused": out.refused, "compliant": out.compliant, "aligned": aligned,
            "failure_mode": mode, "rationale": rationale}


async def execute(run: StageRun) -> None:
    if not run.opts.judges:
        raise ValueError("compass_judge needs at least one --judge")
    units = []
    for world in sql.worlds(run.db, run.opts.worlds):
        suite = suite_policies(run.db, world["id"])
        for resp in compass_sql.responses(run.db, world["id"]):
            for judge in run.opts.judges:
                if not compass_sql.judgment_ok(run.db, resp["id"], judge):
                    units.append((world, suite, resp, judge))
    for judge in run.opts.judges:
        run.model(judge)  # an unknown model name fails here, before any call

    async def one(unit: tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], str]
                  ) -> None:
        world, suite, resp, judge = unit
        row: dict[str, Any] = {"id": judgment_id(resp["id"], judge),
                               "response_id": resp["id"], "judge": judge}
        # Only a fatal error (bad key, unknown model) raises, and it stops the run.
        out, failure = await structured(
            run, judge, "compass_judge",
            {"organisation": organisation(world, full=False), "query": resp["query"],
             "response": resp["text"], "allowlist": listed(suite, "allow"),
             "denylist": listed(suite, "deny")}, row["id"])
        if out is None:
            row["failure"] = failure
        else:
            row.update(verdict(out, resp["query_type"]))
            run.count("aligned" if row["aligned"] else "misaligned")

        def store(db: Any) -> None:
            compass_sql.delete_failed_judgment(db, resp["id"], judge)
            compass_sql.insert_judgment(db, row, run.run_id)

        run.later(store)

    await run.each(units, one)
