"""Stage `dialogue_judge`: each judge model judges each stored dialogue (variants included),
`--attempts N` times, as in the CompliBench paper.

One call per (dialogue, judge, attempt) with the guideline document and the whole conversation,
asking for the public judge output: for every assistant turn the governing guideline (category,
key, phase), whether the turn violates it, and a reason. The attempt number is part of the
request, so attempt 2 is its own call rather than a cache hit of attempt 1, while re-running the
stage replays nothing at all: attempts already stored without a failure (run or imported) are
skipped. `--binary` asks for the verdict only (template dialogue_judge_binary) and stores the
attempt with binary_verdicts=1 under the judge name with "+binary" appended, so a model judged
both ways keeps two separately scored judges.

What is stored (`dialogue_sql.replace_attempt`, source 'run'): a failed call, or an answer still
invalid after the repair round, is an attempt with `failure` and no predictions (listed by the
report, retried by a re-run); a prediction naming a guideline not in the document is kept as
predicted (it is simply wrong); a turn index that is not an assistant turn is dropped, and an
assistant turn the answer left out stays missing (the metrics count it wrong), both said in the
run's notes.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.dialogue import Guideline
from copal_tui.domain.outputs import DialogueBinaryJudgeOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import structured
from copal_tui.pipeline.dialogue_common import conversation, guideline_document, selected
from store.artifacts import dialogue_sql
from store.artifacts.dialogue_sql import StoredDialogue
from store.pipeline import dialogue_pipeline_sql as psql

BINARY_SUFFIX = "+binary"


def judge_label(judge: str, binary: bool) -> str:
    return judge + BINARY_SUFFIX if binary else judge


def predictions(out: DialogueBinaryJudgeOut, d: StoredDialogue, *,
                binary: bool) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """(prediction rows, dropped turn indexes, assistant turns left out) of one answer."""
    assistant = {t.turn_index for t in d.turns if t.role == "assistant"}
    rows: list[dict[str, Any]] = []
    dropped: list[int] = []
    for v in out.turn_guidelines:
        if v.turn_index not in assistant:
            dropped.append(v.turn_index)
            continue
        u = v.guideline_used
        row: dict[str, Any] = {"turn_index": v.turn_index, "violation": u.is_violation,
                               "reason": u.judge_reason or None}
        if not binary:
            # Validated by the output model, so this cannot raise; the key is kept as written
            # (trimmed): the metrics compare normalised keys.
            g = Guideline.of(u.guidance_category, u.guidance_key, u.guideline_phase)
            row.update(category=g.category, key=" ".join((u.guidance_key or "").split()),
                       phase=g.phase)
        rows.append(row)
    left_out = sorted(assistant - {r["turn_index"] for r in rows})
    return rows, dropped, left_out


async def execute(run: StageRun) -> None:
    if not run.opts.judges:
        raise ValueError("dialogue_judge needs at least one --judge")
    binary = run.opts.dialogue.binary
    attempts = range(1, max(1, run.opts.dialogue.attempts) + 1)
    ids = selected(run)
    for judge in run.opts.judges:
        run.model(judge)  # an unknown model name fails here, before any call
    units: list[tuple[str, str, int]] = []
    for judge in run.opts.judges:
        done = psql.completed_attempts(run.db, judge_label(judge, binary))
        units.extend((did, judge, k) for did in ids for k in attempts if (did, k) not in done)
    dialogues = {did: dialogue_sql.stored_dialogue(run.db, did) for did in {u[0] for u in units}}
    task = "dialogue_judge_binary" if binary else "dialogue_judge"

    async def one(unit: tuple[str, str, int]) -> None:
        did, judge, k = unit
        d = dialogues[did]
        assert d is not None
        label = judge_label(judge, binary)
        name = f"{did}+{label}#{k}"
        out, failure = await structured(
            run, judge, task, {"attempt": k, "guidelines": guideline_document(d.guidelines),
                               "conversation": conversation(d.turns)}, name)
        attempt: dict[str, Any] = {"dialogue_id": did, "judge": label, "attempt": k,
                                   "binary": binary, "source": "run"}
        rows: list[dict[str, Any]] = []
        if out is None:
            attempt["failure"] = failure
        else:
            rows, dropped, left_out = predictions(out, d, binary=binary)
            run.count("attempts")
            run.count("predictions", len(rows))
            if dropped:
                run.count("dropped_turns", len(dropped))
                run.errors.append({"unit": name, "reason": f"note: dropped verdicts for turns "
                                   f"{dropped} (not assistant turns)"})
            if left_out:
                run.count("unanswered_turns", len(left_out))
                run.errors.append({"unit": name, "reason": f"note: no verdict for assistant "
                                   f"turns {left_out} (counted wrong)"})

        def store(db: Any) -> None:
            dialogue_sql.replace_attempt(db, attempt, rows, run.run_id)

        run.later(store)

    await run.each(units, one)
