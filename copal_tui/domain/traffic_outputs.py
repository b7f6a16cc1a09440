"""The structured answer of the real-traffic audit's automatic labeller (task `traffic_judge`,
registered in `copal_tui.domain.outputs.TASK_OUTPUTS` with the other tasks' models).

The judge answers what an annotator labels (`copal_tui.domain.traffic.TrafficLabel`): the
pair's policy category, whether the response is erroneous, the policies that apply and why.
The same consistency rules hold: a pair with no clear policy names no policy, a single-policy
pair at most one; an answer that breaks them goes to the repair round, as an invalid one does.
A category written loosely ("Single-policy", "multi_policy", "no clear policy") is read as the
category it spells; any other word is invalid. Policy ids the input did not offer are kept
here and dropped by the stage (as the full-policy judge drops them), which says so in its run
notes.
"""

from __future__ import annotations

import re
from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from copal_tui.domain.output_base import ModelOutput
from copal_tui.domain.traffic import CATEGORIES, MULTI, NONE, SINGLE

_SPELLINGS = {"no clear policy": NONE, "no policy": NONE, "no clear": NONE,
              "single policy": SINGLE, "multi policy": MULTI, "multiple": MULTI,
              "multiple policies": MULTI, "multi policies": MULTI}


def read_category(value: object) -> object:
    """A category as written by a model, read as one of CATEGORIES when it spells one (other
    values go on to the Literal check, which refuses them with the choices)."""
    if not isinstance(value, str):
        return value
    key = " ".join(re.split(r"[\s_\-]+", value.strip().lower()))
    return key if key in CATEGORIES else _SPELLINGS.get(key, value)


class TrafficJudgeOut(ModelOutput):
    category: Literal["none", "single", "multi"]
    erroneous: bool
    policies: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, v: object) -> object:
        return read_category(v)

    @field_validator("policies", mode="before")
    @classmethod
    def _policies(cls, v: object) -> object:
        return [] if v is None else v

    @field_validator("policies", mode="after")
    @classmethod
    def _ids(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(p.strip() for p in v if p.strip()))

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.category == NONE and self.policies:
            raise ValueError("category none (no clear policy) names no policy: leave "
                             "`policies` empty or choose single or multi")
        if self.category == SINGLE and len(self.policies) > 1:
            raise ValueError(f"category single names at most one policy, not "
                             f"{len(self.policies)}: choose multi if two or more must be "
                             "honoured in the one answer")
        return self
