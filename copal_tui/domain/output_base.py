"""The base of every structured output the pipeline asks of a model (the task models of
`copal_tui.domain.outputs` and `copal_tui.domain.dialogue_outputs`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ModelOutput(BaseModel):
    """One task's answer. Models add stray keys; they are ignored rather than failing a good
    answer."""

    model_config = ConfigDict(extra="ignore")
