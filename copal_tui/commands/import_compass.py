"""COMPASS's sources for `copal import` (its descriptor's `importers`): scenario folders, one
world per organisation, and judged results with the judge that wrote them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from copal_tui.commands.import_copal import counted
from copal_tui.commands.suite_import import Importer

if TYPE_CHECKING:
    from store.db import Database


def _scenarios(db: Database, paths: Sequence[Path], judge: str | None,
               replace: bool) -> list[str]:
    from copal_tui.interchange.compass_import import import_compass

    return [counted(import_compass(db, list(paths)))]


def _judged(db: Database, paths: Sequence[Path], judge: str | None,
            replace: bool) -> list[str]:
    from copal_tui.interchange.compass_judged import import_judged, summary_lines

    assert judge is not None, "the command checks --judge first"
    return list(summary_lines(import_judged(db, list(paths), judge)))


SCENARIOS = Importer(
    help="compass: COMPASS scenario folders (policies/<Org>.json, contexts/<Org>.txt, "
         "system_prompts/<Org>.txt), one world per organisation.", run=_scenarios)
JUDGED = Importer(
    help="compass-judged: COMPASS judged results (judged_<query_type>_<Org>_<model>_"
         "<timestamp>.jsonl files or folders of them), with --judge; import the "
         "organisations with --from compass first.", run=_judged, judge=True)
