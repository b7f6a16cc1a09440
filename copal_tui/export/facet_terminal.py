"""The observed-facet section on the terminal (the tables of `copal_tui.export.facet_tables`
fitted to the console's width). Apart from those, so that the report's table list loads no
terminal library.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from copal_tui.domain.safe_text import visible
from copal_tui.export.facet_tables import (
    FACET_CODES,
    SOURCES,
    code,
    judge_setting,
    legend_entries,
    observed_section,
)
from copal_tui.export.fit_table import packed, print_table
from copal_tui.export.formats import NA, cell_text
from copal_tui.metrics.document import ReportDocument


def print_observed_facets(console: Any, doc: ReportDocument) -> list[str]:
    """The section on the terminal: the caveat when an offline model stands behind it, one
    table per source (codes for facets, a legend under them), then the agreement. Returns the
    layout `fit_table.print_table` used for each table (none without the section)."""
    section = observed_section(doc)
    if section is None:
        return []
    if section.get("caveat"):
        console.print(Text(visible(section["caveat"]), style="bold reverse"))
    columns = list(section["columns"])
    headers = ["target", "n", *(code(c) for c in columns)]
    used: list[str] = []
    layouts = []
    for source, key in SOURCES:
        rows = [[code(r["target_facet"]), r["errors"], *(r["counts"][c] for c in columns)]
                for r in section[key]["rows"]]
        used += [r["target_facet"] for r in section[key]["rows"] if r["target_facet"] not in used]
        who = f"judge {judge_setting(section)}" if source == "judge" else "human reference"
        layouts.append(print_table(
            console, headers, rows, numeric=set(range(1, len(headers))),
            title=f"Observed facet (columns) of errors by target facet (rows), {who}"))
    names = [*columns, *(u for u in used if u not in columns and u in FACET_CODES)]
    # Packed as fit_table packs its legends: an entry is never split across lines.
    for line in packed([Text(visible(e)) for e in legend_entries(names)], console.width):
        console.print(line)
    a = section["agreement"]
    human = section["human_table"]
    summary = (f"judge vs human facet on {a['n_both_errors']} responses both call errors: "
               f"{a['n_agree']} of {a['n_compared']} with a facet from each agree "
               f"({cell_text(a['agreement'], 'float', 3, NA)}); "
               f"kappa {cell_text(a['kappa'], 'float', 3, NA)}")
    if a.get("kappa_reason"):
        summary += f" ({a['kappa_reason']})"
    summary += (f"; excluded: {human['error_ties_excluded']} error ties, "
                f"{human['facet_ties_excluded']} facet ties")
    console.print(Text(visible(summary)))
    return layouts
