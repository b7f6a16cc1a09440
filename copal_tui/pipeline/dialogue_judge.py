"""Stage `dialogue_judge`: each judge model judges each stored dialogue (variants included),
`--attempts N` times (4 by default, as the CompliBench paper averages four runs).

One call per (dialogue, judge, attempt), as CompliBench's `_evaluate_one` makes it: its system
prompt, and a user message laying out the guideline document, the conversation as `index |
ROLE: content` lines and the conversation id (`copal_tui.domain.dialogue_layout`), asking for
every assistant turn's governing guideline (category, key, phase), whether the turn violates
it, and a reason. The attempt number goes as the request's `seed`, as the reference sends it,
so attempt 2 is its own call rather than a cache hit of attempt 1, while re-running the stage
replays nothing at all: attempts already stored without a failure (run or imported) are
skipped. `--judge-prompt copal` adds copal's two rules and its prompt-injection paragraph
(template dialogue_judge_copal) and stores the attempts under the judge name with
"+copal-prompt" appended; `--binary` asks for the verdict only (template
dialogue_judge_binary, a copal addition) and stores them with binary_verdicts=1 under the
judge name with "+binary" appended. So each way of asking is its own, separately scored judge.

What is stored per attempt (`dialogue.replace_attempt`, source 'run') is copal's reading: its
parser (which cuts an object out of prose or fences) and one repair round for an answer with
no readable verdict, read as CompliBench reads a decoded answer (`read_judge_answer`: a
Category 1 or 3 guideline gets phase -1, only a JSON true is a violation, a turn naming no
guideline is an empty prediction). The report's headline figures are CompliBench's reading of
the first answer instead (`read_judge_text`); whenever that differs from what was stored, or
is no reading at all (an answer that is JSON but not an object, which the reference never
scores), the first answer's text is kept (`first_answer`). Then:
- a call that failed (no answer came back) is an attempt with `failure` and no predictions,
  listed by the report and retried by a re-run;
- an answer still unreadable after the repair round is a scored attempt with no predictions
  (`unparsed`: every turn wrong), never retried: a judge cannot do better by failing;
- an answer read after the repair round is `repaired`;
- a prediction naming a guideline not in the document is kept as predicted (it is simply
  wrong); a turn index that is not an assistant turn is dropped, and an assistant turn the
  answer left out stays missing (the metrics count it wrong), both said in the run's notes.
"""

from __future__ import annotations

from typing import Any

from copal_tui import prompts
from copal_tui.domain.dialogue import JudgedTurn, by_turn, read_judge_text
from copal_tui.domain.dialogue_outputs import DialogueBinaryJudgeOut
from copal_tui.domain.outputs import TASK_OUTPUTS
from copal_tui.pipeline.base import StageRun
from copal_tui.pipeline.dialogue_common import (
    conversation,
    guideline_document,
    public_id,
    selected,
)
from store.artifacts import dialogue
from store.artifacts.dialogue import StoredDialogue
from store.pipeline import dialogue as psql

BINARY_SUFFIX = "+binary"
COPAL_PROMPT_SUFFIX = "+copal-prompt"


def judge_task(binary: bool, judge_prompt: str) -> str:
    """The template a judge is asked with (`--binary`, `--judge-prompt`)."""
    if binary:
        return "dialogue_judge_binary"
    return "dialogue_judge_copal" if judge_prompt == "copal" else "dialogue_judge"


def judge_label(judge: str, binary: bool, judge_prompt: str = "reference") -> str:
    """The name a judge's attempts are stored under: one per way of asking."""
    if binary:
        return judge + BINARY_SUFFIX
    return judge + COPAL_PROMPT_SUFFIX if judge_prompt == "copal" else judge


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
    binary, judge_prompt = run.opts.dialogue.binary, run.opts.dialogue.judge_prompt
    attempts = range(1, max(1, run.opts.dialogue.attempts) + 1)
    ids = selected(run)
    for judge in run.opts.judges:
        run.model(judge)  # an unknown model name fails here, before any call
    units: list[tuple[str, str, int]] = []
    for judge in run.opts.judges:
        done = psql.completed_attempts(run.db, judge_label(judge, binary, judge_prompt))
        units.extend((did, judge, k) for did in ids for k in attempts if (did, k) not in done)
    dialogues = {did: dialogue.stored_dialogue(run.db, did) for did in {u[0] for u in units}}
    task = judge_task(binary, judge_prompt)
    tpl = run.template(task)

    async def one(unit: tuple[str, str, int]) -> None:
        did, judge, k = unit
        d = dialogues[did]
        assert d is not None
        label = judge_label(judge, binary, judge_prompt)
        name = f"{did}+{label}#{k}"
        messages = prompts.render(task, {"guidelines": guideline_document(d.guidelines),
                                         "conversation": conversation(d.turns),
                                         "conversation_id": public_id(d)}, using=tpl)
        result = await run.llm.structured(run.model(judge), messages, TASK_OUTPUTS[task],
                                          task=task, template_version=tpl.version, seed=k)
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
                           first_answer=None if first is not None
                           and by_turn(first) == by_turn(turns) else first_text)
            rows, dropped, left_out = predictions(turns, d, binary=binary)
            run.count("attempts")
            run.count("predictions", len(rows))
            if first is None:
                run.count("not_scored_by_reference")
                run.errors.append({"unit": name, "reason": "note: the first answer is JSON but "
                                   "not an object, which CompliBench never scores (left out of "
                                   "the headline figures)"})
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
