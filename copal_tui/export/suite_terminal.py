"""How `copal report` prints the COMPASS sections (the suite's `Report.terminal`): PAS as a
pivot per judge (world x query type by target), then the other COMPASS tables, then COMPASS's
own summary table as its analysis script prints it. The caveat is printed before, by the
report's terminal rendering (copal_tui.export.terminal), as for every suite.
"""

from __future__ import annotations

from rich.console import Console

from copal_tui.export.fit_table import print_table
from copal_tui.export.suite_tables import compass_tables, summary_tables
from copal_tui.export.terminal import f3, show
from copal_tui.metrics.compass_document import CompassSections, PasRow
from copal_tui.metrics.document import ReportDocument


def print_compass(console: Console, doc: ReportDocument, s: CompassSections) -> None:
    """The COMPASS sections of `doc` on the terminal."""
    by_judge: dict[str, list[PasRow]] = {}
    for r in s.pas:
        by_judge.setdefault(r.judge, []).append(r)
    for judge, judged in by_judge.items() or [("none", [])]:
        targets = list(dict.fromkeys(f"{r.model} ({r.variant})" for r in judged))
        cells: dict[tuple[str, str], dict[str, str]] = {}
        for r in judged:
            text = "n/a" if r.n == 0 else f"{f3(r.pas.value)} ({r.aligned}/{r.n})"
            cells.setdefault((r.world, r.query_type), {})[f"{r.model} ({r.variant})"] = text
        print_table(console, ["world", "query type", *targets],
                    [[w, t, *(c.get(x, "") for x in targets)] for (w, t), c in cells.items()],
                    title=f"Policy Alignment Score, judge {judge}: world x query type (rows), "
                          "target (columns); PAS (aligned/n)",
                    numeric=set(range(2, len(targets) + 2)), keys=2, letter_all=True)
    for t in compass_tables(s):
        if t.name not in ("pas", "pas_pivot"):  # the pivot above shows them
            show(console, t)
    for t in summary_tables(s):  # COMPASS's own table, as its analysis script prints it
        show(console, t, keys=2)
