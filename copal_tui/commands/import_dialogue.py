"""The dialogue suite's sources for `copal import` (its descriptor's `importers`): CompliBench
conversation files and the outputs of a judge on them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from copal_tui.commands.suite_import import Importer

if TYPE_CHECKING:
    from store.db import Database


def _import(db: Database, paths: Sequence[Path], judge: str | None,
            replace: bool) -> list[str]:
    from copal_tui.interchange import complibench_import as ci

    # Every PATH or none: one transaction (a bad file anywhere leaves the database as it was).
    done = ci.import_paths(db, tuple(paths), judge, replace=replace)
    what = "conversation(s)" if judge is None else f"attempt(s) of {judge}"
    lines = [f"imported {done.added} {what}; {done.skipped} already stored identically"]
    note = ci.skipped_note(done.not_conversations)
    return lines + ([note] if note else [])


CONVERSATIONS = Importer(
    help="complibench: CompliBench conversation files or folders (id <folder>/<stem>).",
    run=_import)
JUDGE_OUTPUTS = Importer(
    help="complibench-judge: judge outputs (<stem>_usage.json, <stem>_usage_attempt<k>.json), "
         "with --judge.", run=_import, judge=True, replace=True)
