"""Importing CompliBench conversations and judge outputs into the store, all or nothing.

`import_paths` imports every path given (conversations, or one judge's outputs) in one transaction.
`import_conversations` parses every conversation file first (any problem: ImportFailure, nothing
written), then writes them in one transaction. Files of a folder that are not conversations
(readme files, the release's manifests) are skipped and reported, not refused. A conversation
already stored from identical bytes is skipped; the same id with different content is an error
(a silent replace would change the truth under judgments already made). `import_judge_outputs` stores each file as one attempt of
the named judge; its conversation must be imported already and every turn it names must be an
assistant turn of it. Re-importing an identical attempt is skipped; a different one is an error
unless `replace` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from copal_tui.interchange.complibench import (
    Conversation,
    JudgeOutput,
    judge_files,
    load_conversations,
    parse_judge_output,
)
from copal_tui.interchange.errors import ImportFailure
from store.artifacts import dialogue
from store.db import Database, write


@dataclass
class DialogueImport:
    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Files under the folder that are not conversations (readme, manifests), relative to it.
    not_conversations: list[str] = field(default_factory=list)


def import_conversations(db: Database, root: Path) -> DialogueImport:
    parsed: list[Conversation] = []
    seen: dict[str, Path] = {}
    found, others = load_conversations(root)
    for c in found:
        if c.id in seen:
            raise ImportFailure(c.path, f"conversation id {c.id} also comes from {seen[c.id]}")
        seen[c.id] = c.path
        parsed.append(c)
    out = DialogueImport(not_conversations=[p.relative_to(root).as_posix() for p in others])
    with write(db):
        for c in parsed:
            stored = dialogue.dialogue_sha(db, c.id)
            if stored == c.raw_sha256:
                out.skipped.append(c.id)
                continue
            if stored is not False:
                raise ImportFailure(c.path, f"conversation {c.id} is already stored with "
                                    "different content (import it under another folder name "
                                    "or delete the old one first)")
            dialogue.insert_dialogue(
                db,
                {"id": c.id, "domain": c.domain, "source_path": str(c.path),
                 "source_sha256": c.raw_sha256, "overrides": c.overrides},
                [{"category": g.category, "key": g.key, "phase": g.phase, "text": g.text}
                 for g in c.guidelines],
                [{"turn_index": t.turn_index, "role": t.role, "content": t.content,
                  "category": None if t.guideline is None else t.guideline.category,
                  "key": None if t.guideline is None else _stored_key(c, t.guideline.key),
                  "phase": None if t.guideline is None else t.guideline.phase,
                  "violation": t.violation, "guideline_text": t.guideline_text,
                  "evidence": t.evidence} for t in c.turns],
            )
            out.added.append(c.id)
    return out


def skipped_note(names: list[str]) -> str | None:
    """The line `copal import` prints about files that are not conversations, if any."""
    if not names:
        return None
    n = len(names)
    what = "file that is not a conversation" if n == 1 else "files that are not conversations"
    return f"skipped {n} {what}: {', '.join(names)}"


def _stored_key(c: Conversation, key: str | None) -> str | None:
    # Keep the document's own spelling of the key (the parser compares normalised keys).
    if key is None:
        return None
    for g in c.guidelines:
        if " ".join(g.key.split()).lower() == key:
            return g.key
    return key


def _rows(out: JudgeOutput) -> list[dict[str, object]]:
    return [{"turn_index": t.turn_index,
             "category": None if t.guideline is None else t.guideline.category,
             "key": None if t.guideline is None else t.guideline.key,
             "phase": None if t.guideline is None else t.guideline.phase,
             "violation": int(t.violation), "reason": t.reason} for t in out.turns]


def import_judge_outputs(db: Database, root: Path, judge: str, *,
                         replace: bool = False) -> DialogueImport:
    if not judge.strip():
        raise ImportFailure(root, "a judge name is required (--judge NAME)")
    outputs = [parse_judge_output(p) for p in judge_files(root)]
    result = DialogueImport()
    with write(db):
        for o in outputs:
            d = dialogue.stored_dialogue(db, o.conversation_id)
            if d is None:
                raise ImportFailure(o.path, f"conversation {o.conversation_id} is not imported "
                                    "(import it with --from complibench first)")
            assistant = {t.turn_index for t in d.turns if t.role == "assistant"}
            stray = sorted(t.turn_index for t in o.turns if t.turn_index not in assistant)
            if stray:
                raise ImportFailure(o.path, f"turns {stray} are not assistant turns of "
                                    f"{o.conversation_id}", field="turn_guidelines")
            rows = _rows(o)
            label = f"{o.conversation_id} attempt {o.attempt}"
            old = dialogue.attempt_predictions(db, o.conversation_id, judge, o.attempt)
            if old is not None and not replace:
                if [asdict(p) for p in old] == rows:
                    result.skipped.append(label)
                    continue
                raise ImportFailure(o.path, f"{judge} already has a different {label} "
                                    "(use --replace to overwrite it)")
            dialogue.replace_attempt(
                db, {"dialogue_id": o.conversation_id, "judge": judge, "attempt": o.attempt,
                     "binary": all(t.guideline is None for t in o.turns) and bool(o.turns),
                     "source": "import", "source_path": str(o.path)}, rows)
            result.added.append(label)
    return result


@dataclass(frozen=True)
class DialogueImportTotals:
    added: int
    skipped: int  # already stored identically
    not_conversations: list[str]  # files under the paths that are not conversations


def import_paths(db: Database, paths: Sequence[Path], judge: str | None = None, *,
                 replace: bool = False) -> DialogueImportTotals:
    """CompliBench conversations (`judge=None`) or one judge's outputs from every path, in one
    transaction: a bad file anywhere leaves the database as it was."""
    added = skipped = 0
    others: list[str] = []
    with write(db):
        for path in paths:
            done = import_conversations(db, path) if judge is None else \
                import_judge_outputs(db, path, judge, replace=replace)
            added, skipped = added + len(done.added), skipped + len(done.skipped)
            others += done.not_conversations
    return DialogueImportTotals(added, skipped, others)
