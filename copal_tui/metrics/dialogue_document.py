"""The report models of dialogue judging's sections: CompliBench's figures per judge and domain
(`dialogue_judging`) and the reviewers' error types of the judges' wrong predictions
(`dialogue_error_taxonomy`). The order of a model's fields is the order of its keys in the JSON
(see `document_base`).
"""

from __future__ import annotations

from typing import ClassVar

from copal_tui.metrics.document_base import FlatModel, SuiteSections


class DialogueRow(FlatModel):
    """CompliBench's figures per judge and domain over `attempts` attempts of `conversations`
    conversations: plain floats, None (null, without a reason) when their denominator is
    empty, as CompliBench writes them. The headline figures are CompliBench's own reading of
    each attempt's first answer, pooling `files` conversation x attempt judgements
    (`not_scored`: attempts whose first answer is JSON but not an object, which the reference
    never scores). The `repaired_*` figures are copal's reading (its parser and repair round),
    pooling `repaired_files`: `repaired_attempts` were read after a repair round,
    `unparsed_attempts` gave no readable verdict even then (every turn wrong), and
    `changed_by_repair` are read otherwise than in the headline."""

    judge: str
    domain: str
    conversations: int
    attempts: int
    binary: bool
    compliant_turns: int
    violation_turns: int
    files: int
    not_scored: int
    compliant_turn_accuracy: float | None
    violation_detection_accuracy: float | None
    strict_violation_detection_accuracy: float | None
    conversation_accuracy: float | None
    precision: float | None
    recall: float | None
    repaired_files: int
    repaired_attempts: int
    unparsed_attempts: int
    changed_by_repair: int
    repaired_compliant_turn_accuracy: float | None
    repaired_violation_detection_accuracy: float | None
    repaired_strict_violation_detection_accuracy: float | None
    repaired_conversation_accuracy: float | None
    repaired_precision: float | None
    repaired_recall: float | None


class ErrorTypeCount(FlatModel):
    judge: str
    domain: str
    error_type: str
    count: int


class DialogueSections(SuiteSections):
    """The dialogue-judging sections: CompliBench's figures per judge and domain, and the
    reviewers' error types of the judges' wrong predictions."""

    SUITE: ClassVar[str] = "dialogue"
    dialogue_judging: list[DialogueRow]
    dialogue_error_taxonomy: list[ErrorTypeCount]


