"""COMPASS's part of `copal demo` (its descriptor's `demo`): the sample organisation's scenario
(sample_worlds/compass) gets the single-policy suite beside its composed one, so the report
sets PAS beside the composed error; the summary shows its Policy Alignment Scores."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from copal_tui.commands.suite_demo import DemoRun, DemoSettings, SuiteDemo

if TYPE_CHECKING:
    from rich.console import Console

    from copal_tui.pipeline.base import Options
    from store.db import Database

COMPASS_WORLD = "kestrelpharmacy"  # sample_worlds/compass


def _seed(db: Database) -> dict[str, int]:
    from copal_tui.interchange.compass_import import import_compass
    from copal_tui.resources import sample_worlds_dir

    return dict(import_compass(db, [sample_worlds_dir() / "compass"]))


def _runs(base: Options, settings: DemoSettings) -> list[DemoRun]:
    from copal_tui.domain.suites import suite
    from copal_tui.pipeline.base import CompassOptions

    # Two base queries per policy, the base prompt and the pre-filter.
    opts = replace(base, worlds=[COMPASS_WORLD],
                   compass=CompassOptions(variants=["base", "pre-filter"],
                                          prefilter=settings.generator, per_policy=2))
    return [(list(suite("compass").stage_names()), opts)]


def _summary(console: Console, db: Database, settings: DemoSettings) -> None:
    from rich.table import Table

    from copal_tui.services import store_admin

    pas = Table(title=f"COMPASS Policy Alignment Score on {COMPASS_WORLD} ({settings.judge}; "
                      "higher is better)")
    for col in ("model", "variant", "queries", "n", "aligned", "PAS"):
        pas.add_column(col, justify="left" if col in ("model", "variant", "queries") else "right")
    for row in store_admin.pas_summary(db, settings.judge):
        pas.add_row(row.model, row.variant, row.kind, str(row.n), str(row.aligned),
                    f"{row.aligned / row.n:.1%}")
    console.print(pas)


DEMO = SuiteDemo(seed=_seed, runs=_runs, summary=_summary)
