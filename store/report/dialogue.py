"""The dialogue reads of a report, one job of its bulk reads (`store.report.reads`): every
dialogue's truth, every judge attempt with its predictions (`store.artifacts.dialogue`) and the
reviewers' error-type counts (`store.annotation.dialogue_reviews`), typed
`copal_tui.domain.report_rows.DialogueRows`. Dialogues are not tied to worlds: no scope narrows
them."""

from __future__ import annotations

from copal_tui.domain.report_rows import DialogueRows
from store.annotation.dialogue_reviews import error_type_rows
from store.artifacts import dialogue
from store.db import Database


def dialogue_rows(db: Database) -> DialogueRows:
    """Every dialogue read, in one snapshot; all empty when no dialogue has a judge attempt."""
    with db.atomic():
        attempts = dialogue.attempts(db)
        if not attempts:
            return DialogueRows([], [], [], [])
        return DialogueRows(
            truth=dialogue.truth_turns(db), attempts=attempts,
            predictions=dialogue.predictions(db),
            error_types=error_type_rows(db))


def report_rows(db: Database, worlds: list[str] | None) -> DialogueRows:
    """The dialogue suite's read of `copal report`: every dialogue, whatever the worlds in scope
    (stored dialogues belong to no world)."""
    del worlds
    return dialogue_rows(db)
