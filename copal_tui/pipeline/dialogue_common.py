"""What the dialogue stages share: the dialogues a run covers, and a stored dialogue as the
models see it (the guideline document in the public CompliBench layout, the turns as
{turn_index, role, content}, the conversation id CompliBench's judge is given).

A model never sees a dialogue's stored id, domain or per-turn truth: a variant's id ("...~v5")
would tell a judge where the violation is, so the judge gets its original's file stem.
"""

from __future__ import annotations

from collections.abc import Iterable

from copal_tui.domain.dialogue import CATEGORIES, norm_key
from copal_tui.domain.dialogue_layout import Document, document_of
from copal_tui.pipeline.base import StageRun
from store.artifacts.dialogue import GuidelineRow, StoredDialogue, TurnRow
from store.pipeline import dialogue as psql

# A turn as the models see it: {turn_index, role, content}.
Shown = dict[str, int | str]


def selected(run: StageRun, *, originals_only: bool = False) -> list[str]:
    """Dialogue ids of the run's --domain / --dialogue filters; an unknown --dialogue id is an
    error before any call (a typo would otherwise judge nothing and report success)."""
    ids = psql.select_dialogues(run.db, run.opts.dialogue.domains, run.opts.dialogue.dialogues,
                                originals_only=originals_only)
    if run.opts.dialogue.dialogues:
        unknown = sorted(set(run.opts.dialogue.dialogues) - set(psql.select_dialogues(
            run.db, None, run.opts.dialogue.dialogues)))
        if unknown:
            raise ValueError(f"no stored dialogue {', '.join(unknown)}")
    return ids


def phase_name(phase: int | None) -> str | None:
    return None if phase is None else f"Phase {phase}"


def guideline_document(guidelines: Iterable[GuidelineRow]) -> Document:
    """The stored guidelines as `assistant_guidelines` of the public layout, each workflow's
    phases in their numeric order."""
    return document_of((g.category, g.key, g.phase, g.text) for g in guidelines)


def public_id(d: StoredDialogue) -> str:
    """The conversation id CompliBench's judge is given: the conversation file's stem. A
    variant gets its original's, so the id never tells a judge which turn was changed."""
    return (d.variant_of or d.id).rsplit("/", 1)[-1]


def conversation(turns: Iterable[TurnRow]) -> list[Shown]:
    return [{"turn_index": t.turn_index, "role": t.role, "content": t.content} for t in turns]


def governing(d: StoredDialogue, turn: TurnRow) -> GuidelineRow | None:
    """The document entry of a turn's governing guideline (category, key, phase, text)."""
    for g in d.guidelines:
        if (g.category == turn.category and norm_key(g.key) == norm_key(turn.key)
                and (g.phase == turn.phase or g.category != 2)):
            return g
    return None


def guideline_payload(g: GuidelineRow, text: str | None = None) -> dict[str, str | None]:
    return {"category": CATEGORIES[g.category], "key": g.key,
            "phase": phase_name(g.phase) if g.category == 2 else None,
            "text": g.text if text is None else text}
