"""The dialogue suite's part of `copal demo` (its descriptor's `demo`): the CompliBench sample
dialogues with the outputs of their sample judge, judged once more by the offline dialogue
judge; the summary shows each judge's accuracies."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from copal_tui.commands.suite_demo import DemoRun, DemoSettings, SuiteDemo

if TYPE_CHECKING:
    from rich.console import Console

    from copal_tui.pipeline.base import Options
    from store.db import Database

SAMPLE_DIALOGUE_JUDGE = "sample-judge"  # the judge outputs shipped with the dialogue sample


def _seed(db: Database) -> dict[str, int]:
    from copal_tui.interchange import complibench_import
    from copal_tui.resources import sample_worlds_dir

    dialogues = sample_worlds_dir() / "complibench"
    added = complibench_import.import_paths(db, [dialogues]).added
    complibench_import.import_paths(db, [dialogues], SAMPLE_DIALOGUE_JUDGE)
    return {"dialogue": added}


def _runs(base: Options, settings: DemoSettings) -> list[DemoRun]:
    from copal_tui.pipeline.base import DialogueOptions

    return [(["dialogue_judge"], replace(base, dialogue=DialogueOptions(attempts=2)))]


def _summary(console: Console, db: Database, settings: DemoSettings) -> None:
    from rich.table import Table

    from copal_tui.services.report import dialogue_judging

    dj = Table(title="dialogue judging on the CompliBench sample (every tagged turn scored, "
                     "as CompliBench's code does)")
    for col in ("judge", "domain", "conv", "compliant-turn acc", "violation detection",
                "conversation acc"):
        dj.add_column(col, justify="left" if col in ("judge", "domain") else "right")
    for r in dialogue_judging(db).rows:
        dj.add_row(r.judge, r.domain, str(r.conversations),
                   *(f"{v:.1%}" if v is not None else "n/a" for v in (
                       r.compliant_turn_accuracy, r.violation_detection_accuracy,
                       r.conversation_accuracy)))
    console.print(dj)


DEMO = SuiteDemo(seed=_seed, runs=_runs, summary=_summary)
