"""COPAL's part of `copal demo` (its descriptor's `demo`): every sample world (and the
hand-worked showcase labels), every stage with the reference bots as targets and
`offline/judge` in contract mode, the full-policy judge where human labels exist, and the
reference bots' error rates in the summary."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from copal_tui.commands.suite_demo import DemoRun, DemoSettings, SuiteDemo

if TYPE_CHECKING:
    from rich.console import Console

    from copal_tui.pipeline.base import Options
    from store.db import Database

# The worlds with hand-worked labels: the full-policy judge runs there, which is what the
# judge-validity comparison of the two settings needs.
SHOWCASE_WORLDS = ["harbor-clinics", "meridian-bank"]


def _seed(db: Database) -> dict[str, int]:
    from copal_tui.interchange.importer import import_paths
    from copal_tui.resources import sample_worlds_dir

    return dict(import_paths(db, [sample_worlds_dir()]))


def _runs(base: Options, settings: DemoSettings) -> list[DemoRun]:
    from copal_tui.domain.suites import suite
    from copal_tui.pipeline.base import CopalOptions

    # Sized to finish in well under a minute on two cores: the paper's matched budget of 12
    # items per world, one variant per facet, two candidate compositions per pattern.
    opts = replace(base, copal=CopalOptions(modes=["contract"], budget=settings.budget,
                                            variants=1, per_pattern=2))
    full_policy = replace(opts, copal=replace(opts.copal, modes=["full_policy"]),
                          worlds=SHOWCASE_WORLDS)
    return [(list(suite("copal").stage_names()), opts), (["judge"], full_policy)]


def _summary(console: Console, db: Database, settings: DemoSettings) -> None:
    from rich.table import Table

    from copal_tui.services import store_admin

    for mode in ("contract", "full_policy"):
        table = Table(title=f"error rate of the reference bots on selected COPAL items "
                            f"({settings.judge}, {mode} judge)")
        table.add_column("model")
        table.add_column("n", justify="right")
        table.add_column("errors", justify="right")
        table.add_column("error rate", justify="right")
        for row in store_admin.error_summary(db, settings.judge, mode):
            table.add_row(row.model, str(row.n), str(row.errors), f"{row.rate:.1%}")
        console.print(table)


DEMO = SuiteDemo(seed=_seed, runs=_runs, summary=_summary)
