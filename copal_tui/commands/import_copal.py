"""COPAL's source for `copal import` (its descriptor's `importers`): world YAML and JSONL
interchange files, or folders of both."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from copal_tui.commands.suite_import import Importer

if TYPE_CHECKING:
    from store.db import Database


def _run(db: Database, paths: Sequence[Path], judge: str | None, replace: bool) -> list[str]:
    from copal_tui.interchange.importer import import_paths

    return [counted(import_paths(db, list(paths)))]


def counted(counts: dict[str, int]) -> str:
    """The line an import of records prints: the total, then each kind's count."""
    detail = ", ".join(f"{n} {t}" for t, n in counts.items()) or "nothing new"
    return f"imported {sum(counts.values())} record(s): {detail}"


WORLDS = Importer(help="copal: world YAML and JSONL interchange files.", run=_run)
