"""Structured outputs of the dialogue tasks (CompliBench-style judging, variant writing,
regeneration and the variant checks), one pydantic model per task; the registry of every task's
model is `copal_tui.domain.outputs.TASK_OUTPUTS`."""

from __future__ import annotations

from pydantic import Field, model_validator

from copal_tui.domain.dialogue import JudgedTurn, read_judge_answer
from copal_tui.domain.output_base import ModelOutput


class DialogueGuidelineUsed(ModelOutput):
    """One turn's verdict in the public CompliBench judge format, as CompliBench's parser
    leaves it (`copal_tui.domain.dialogue.read_judge_answer`): the category and key as
    written, the phase an integer (-1 for none and for Category 1 and 3), the verdict a bool."""

    guidance_category: str = ""
    guidance_key: str = ""
    guideline_phase: int = -1
    is_violation: bool = False
    judge_reason: str = ""


class DialogueTurnVerdict(ModelOutput):
    turn_index: int
    guideline_used: DialogueGuidelineUsed


class DialogueBinaryJudgeOut(ModelOutput):
    """A dialogue judge's answer, read exactly as CompliBench reads one: what its parser
    skips is skipped, what it reads as false is false (a string "true", a missing verdict),
    and a turn naming no guideline is an empty prediction. Only an answer with no readable
    turn verdict at all is invalid (and goes to the repair round). Binary judges: only
    `is_violation` counts."""

    turn_guidelines: list[DialogueTurnVerdict]

    @model_validator(mode="before")
    @classmethod
    def _as_complibench_reads_it(cls, data: object) -> object:
        if isinstance(data, DialogueBinaryJudgeOut):
            return data
        turns = read_judge_answer(data)
        if not turns:
            raise ValueError("no turn verdict could be read: `turn_guidelines` must be a list "
                             "of {turn_index, guideline_used: {...}} objects")
        return {"turn_guidelines": [
            {"turn_index": t.turn_index, "guideline_used": {
                "guidance_category": t.category, "guidance_key": t.key,
                "guideline_phase": t.phase, "is_violation": t.violation,
                "judge_reason": t.reason or ""}} for t in turns]}

    def judged(self) -> list[JudgedTurn]:
        """The turns as `read_judge_answer` gave them, in the answer's order."""
        return [JudgedTurn(v.turn_index, u.guidance_category, u.guidance_key,
                           u.guideline_phase, u.is_violation, u.judge_reason or None)
                for v in self.turn_guidelines for u in (v.guideline_used,)]


class DialogueJudgeOut(DialogueBinaryJudgeOut):
    """The full judge (guideline and verdict per turn): read by the same rule."""


class DialogueVariantOut(ModelOutput):
    """The variant writer and the refiner: a modified guideline and what it changes."""

    modified_guideline: str = Field(min_length=1)
    change: str = ""


class DialogueRegenerateOut(ModelOutput):
    reply: str = Field(min_length=1)


class DialogueContentJudgeOut(ModelOutput):
    behaviour_changed: bool
    reason: str = ""


class DialogueComplianceJudgeOut(ModelOutput):
    violates: bool
    reason: str = ""
