"""The traffic suite's part of `copal demo` (its descriptor's `demo`): the sample traffic of a
deployed chatbot (sample_worlds/traffic), imported de-identified and linked to its world, the
paper's audit sample drawn from it, every pair labelled by the offline labeller, and Table 11
as that labeller reads it (marked HEURISTIC) in the summary."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from copal_tui.commands.suite_demo import DemoRun, DemoSettings, SuiteDemo

if TYPE_CHECKING:
    from rich.console import Console

    from copal_tui.pipeline.base import Options
    from store.db import Database

# The sample logs and their sources, the world their policies come from, and the audit sample
# drawn from them.
TRAFFIC_LOGS = (("lumen_telecom_web.ndjson", "web"), ("lumen_telecom_app.ndjson", "app"),
                ("lumen_telecom_web_export.csv", "web"))
TRAFFIC_WORLD = "lumen-telecom"
TRAFFIC_CAMPAIGN = "traffic-audit"
TRAFFIC_SAMPLE = 200


def _seed(db: Database) -> dict[str, int]:
    """Import the logs and draw a seeded sample of TRAFFIC_SAMPLE pairs, each source's share in
    proportion to its pairs."""
    from copal_tui.resources import sample_worlds_dir
    from copal_tui.services.annotation import campaigns
    from copal_tui.services.annotation.suites import Filters
    from copal_tui.services.traffic import import_log
    from copal_tui.services.traffic_annotation import Traffic

    stored = 0
    for name, source in TRAFFIC_LOGS:
        stored += import_log(db, sample_worlds_dir() / "traffic" / name, source=source,
                             world=TRAFFIC_WORLD).stored
    campaigns.create(db, TRAFFIC_CAMPAIGN, Traffic.name, Filters(), balanced=True,
                     size=TRAFFIC_SAMPLE)
    return {"traffic pairs": stored}


def _runs(base: Options, settings: DemoSettings) -> list[DemoRun]:
    return [(["traffic_judge"], replace(base, worlds=None))]


def _summary(console: Console, db: Database, settings: DemoSettings) -> None:
    """Table 11 of the sample traffic, as the automatic labeller reads it."""
    from rich.table import Table
    from rich.text import Text

    from copal_tui.services.report import traffic_audit

    audit = traffic_audit(db)
    if audit is None:
        return
    if audit.caveat:
        console.print(Text(audit.caveat, style="bold reverse"))
    t = Table(title=f"real-traffic audit (Table 11) of the sample logs, labelled by "
                    f"{audit.labels}: all sources")
    for col in ("category", "cases", "errors", "error rate", "share of cases",
                "share of errors"):
        t.add_column(col, justify="left" if col == "category" else "right")
    for r in audit.rows:
        if r.source == "all":
            t.add_row(r.category, str(r.cases), str(r.errors),
                      *(f"{m.value:.1%}" if m.value is not None else "n/a"
                        for m in (r.error_rate, r.share_of_cases, r.share_of_errors)))
    console.print(t)


DEMO = SuiteDemo(seed=_seed, runs=_runs, summary=_summary)
