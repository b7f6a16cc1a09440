"""Stage `dialogue_judge`: each judge model judges each stored dialogue (variants included),
`--attempts N` times (4 by default, as the CompliBench paper averages four runs).

One call per (dialogue, judge, attempt) with the guideline document and the whole conversation,
asking for the public judge output: for every assistant turn the governing guideline (category,
key, phase), whether the turn violates it, and a reason. The attempt number is part of the
request, so attempt 2 is its own call rather than a cache hit of attempt 1, while re-running the
stage replays nothing at all: attempts already stored without a failure (run or imported) are
skipped. `--binary` asks for the verdict only (template dialogue_judge_binary) and stores the
attempt with binary_verdicts=1 under the judge name with "+binary" appended, so a model judged
both ways keeps two separately scored judges.

An answer is read as CompliBench reads it (`copal_tui.domain.dialogue.read_judge_answer`, through
the output model): a Category 1 or 3 guideline gets phase -1, only a JSON true is a violation, a
turn naming no guideline is an empty prediction. copal adds one repair round for an answer with
no readable verdict at all. What is stored (`dialogue.replace_attempt`, source 'run'):
- a call that failed (no answer came back) is an attempt with `failure` and no predictions,
  listed by the report and retried by a re-run;
- an answer still unreadable after the repair round is a scored attempt with no predictions
  (`unparsed`: every turn wrong), never retried: a judge cannot do better by failing;
- an answer read after the repair round is `repaired`; and whenever CompliBench's parser, which
  has no repair round, reads the first answer differently from what was stored, its text is kept
  (`first_answer`) for the report's first-answer figures;
- a prediction naming a guideline not in the document is kept as predicted (it is simply
  wrong); a turn index that is not an assistant turn is dropped, and an assistant turn the
  answer left out stays missing (the metrics count it wrong), both said in the run's notes.
"""

from __future__ import annotations

from typing import Any

from copal_tui.domain.dialogue import JudgedTurn, by_turn, read_judge_text
from copal_tui.domain.dialogue_outputs import DialogueBinaryJudgeOut
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.compass_common import structured_result
from copal_tui.pipeline.dialogue_common import conversation, guideline_document, selected
from store.artifacts import dialogue
from store.artifacts.dialogue import StoredDialogue
from store.pipeline import dialogue as psql

BINARY_SUFFIX = "+binary"


def judge_label(judge: str, binary: bool) -> str:
    return judge + BINARY_SUFFIX if binary else judge


def predictions(turns: list[JudgedTurn], d: StoredDialogue, *,
                binary: bool) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """(prediction rows, dropped turn indexes, assistant turns left out) of one answer's turns;
    a turn given twice keeps its last entry, as CompliBench's metrics do."""
    assistant = {t.turn_index for t in d.turns if t.role == "assistant"}
    rows: list[dict[str, Any]] = []
    dropped: list[int] = []
    for t in by_turn(turns).values():
        if t.turn_index not in assistant:
            dropped.append(t.turn_index)
            continue
        row: dict[str, Any] = {"turn_index": t.turn_index, "violation": t.violation,
                               "reason": t.reason}
        if not binary:
            g = t.guideline
            row.update(category=g.category, key=t.key, phase=t.phase)
        rows.append(row)
    left_out = sorted(assistant - {r["turn_index"] for r in rows})
    return rows, sorted(dropped), left_out


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
    dialogues = {did: dialogue.stored_dialogue(run.db, did) for did in {u[0] for u in units}}
    task = "dialogue_judge_binary" if binary else "dialogue_judge"

    async def one(unit: tuple[str, str, int]) -> None:
        did, judge, k = unit
        d = dialogues[did]
        assert d is not None
        label = judge_label(judge, binary)
        name = f"{did}+{label}#{k}"
        result = await structured_result(
            run, judge, task, {"attempt": k, "guidelines": guideline_document(d.guidelines),
                               "conversation": conversation(d.turns)})
        attempt: dict[str, Any] = {"dialogue_id": did, "judge": label, "attempt": k,
                                   "binary": binary, "source": "run"}
        rows: list[dict[str, Any]] = []
        if result.value is None and not result.invalid:
            # No answer at all (the call failed): a failure, which a re-run asks again.
            raw = (result.raw or "")[:2000]
            reason = f"{task}: {result.reason}" + (f" | raw: {raw}" if raw else "")
            run.fail(name, reason)
            attempt["failure"] = reason
        else:
            out: DialogueBinaryJudgeOut | None = result.value
            turns = [] if out is None else out.judged()
            first_text = result.raw if result.first_raw is None else result.first_raw
            first = read_judge_text(first_text)
            attempt.update(repaired=out is not None and result.calls > 1,
                           unparsed=out is None,
                           first_answer=None if by_turn(first) == by_turn(turns)
                           else first_text)
            rows, dropped, left_out = predictions(turns, d, binary=binary)
            run.count("attempts")
            run.count("predictions", len(rows))
            if out is None:
                run.count("unparsed_attempts")
                run.errors.append({"unit": name, "reason": f"note: no verdict could be read "
                                   f"after the repair round (scored with every turn wrong): "
                                   f"{result.reason} | raw: {(result.raw or '')[:300]}"[:500]})
            elif result.calls > 1:
                run.count("repaired_attempts")
            if dropped:
                run.count("dropped_turns", len(dropped))
                run.errors.append({"unit": name, "reason": f"note: dropped verdicts for turns "
                                   f"{dropped} (not assistant turns)"})
            if left_out and out is not None:
                run.count("unanswered_turns", len(left_out))
                run.errors.append({"unit": name, "reason": f"note: no verdict for assistant "
                                   f"turns {left_out} (counted wrong)"})

        def store(db: Any) -> None:
            dialogue.replace_attempt(db, attempt, rows, run.run_id)

        run.later(store)

    await run.each(units, one)
