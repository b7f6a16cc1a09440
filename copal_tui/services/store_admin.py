"""The store commands' database work: schema migrations, counts (`copal stats`), the online
backup, CompliBench imports as one transaction, and the demo's summary reads.

`store.migrations` loads sqlite-utils (~0.25 s), so it is imported inside the functions that
migrate: only the commands that migrate pay for it, not every start of the CLI or the TUI.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from copal_tui.services import reading
from store.db import Database, write


def pending(db: Database) -> list[str]:
    """The migrations not applied yet, in order."""
    from store import migrations

    return migrations.pending(db)


def migrate(db: Database) -> list[str]:
    """Apply the pending migrations (each its own transaction); the ones applied."""
    from store import migrations

    return migrations.migrate(db)


def stats(db: Database) -> dict[str, int]:
    """Counts of everything in the store, by what is counted (one snapshot)."""
    from store.artifacts import reads

    with reading(db):
        return reads.stats(db)


def backup(db: Database, dest: Path) -> str:
    """Copy the database into the file `dest` through SQLite's online backup API (consistent
    while others write); the copy's `PRAGMA quick_check` answer ("ok" when sound)."""
    out = sqlite3.connect(str(dest))
    try:
        db.conn.backup(out)
        return str(out.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        out.close()


@dataclass(frozen=True)
class DialogueImportTotals:
    added: int
    skipped: int  # already stored identically
    not_conversations: list[str]  # files under the paths that are not conversations


def import_dialogues(db: Database, paths: Sequence[Path], judge: str | None = None, *,
                     replace: bool = False) -> DialogueImportTotals:
    """CompliBench conversations (`judge=None`) or one judge's outputs from every path, in one
    transaction: a bad file anywhere leaves the database as it was."""
    from copal_tui.interchange import complibench_import as ci

    added = skipped = 0
    others: list[str] = []
    with write(db):
        for path in paths:
            done = ci.import_conversations(db, path) if judge is None else \
                ci.import_judge_outputs(db, path, judge, replace=replace)
            added, skipped = added + len(done.added), skipped + len(done.skipped)
            others += done.not_conversations
    return DialogueImportTotals(added, skipped, others)


# ------------------------------------------------------------------ the demo's summary


@dataclass(frozen=True)
class ModelErrors:
    """A target model's judged selected items of one method and how many erred."""

    model: str
    n: int
    errors: int

    @property
    def rate(self) -> float:
        return self.errors / self.n if self.n else float("nan")


@dataclass(frozen=True)
class AlignedCount:
    """A target model's judged COMPASS responses of one variant and kind (allowed/denied)."""

    model: str
    variant: str
    kind: str
    n: int
    aligned: int


def error_summary(db: Database, judge: str, mode: str) -> list[ModelErrors]:
    from store.artifacts import reads

    with reading(db):
        rows = reads.error_summary(db, judge, mode)
    return [ModelErrors(r["model"], int(r["n"]), int(r["errors"] or 0)) for r in rows]


def pas_summary(db: Database, judge: str) -> list[AlignedCount]:
    from store.artifacts import reads

    with reading(db):
        rows = reads.pas_summary(db, judge)
    return [AlignedCount(r["model"], r["variant"], r["kind"], int(r["n"]),
                         int(r["aligned"] or 0)) for r in rows]
