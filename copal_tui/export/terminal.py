"""`copal report` on the terminal: the report's tables (copal_tui.export.tables, the narrow
`display` view Markdown and LaTeX show) plus the pivots only the terminal has (error rate by
pattern, facet and world), then each other suite's sections as its descriptor prints them
(`Report.terminal`, else its tables), each suite's heuristic caveat in bold before its figures. An estimate is shown with its interval in one cell (`0.681 [0.600,
0.785]`), so every judge-validity metric carries its bootstrap interval.

Tables go through `copal_tui.export.fit_table`, which fits them to the terminal's width (80
columns included) without breaking a number or eliding anything. Text from the store is shown
literally: every title, header, cell and note is a rich `Text` (never markup) of text made safe
by `copal_tui.domain.safe_text.visible` (an escape sequence shows as `␛...`, never runs).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from copal_tui.domain.safe_text import visible
from copal_tui.domain.suites import SUITES, load
from copal_tui.export.facet_terminal import print_observed_facets
from copal_tui.export.fit_table import print_table, terminal_console
from copal_tui.export.formats import NA, cell_text
from copal_tui.export.table import Table
from copal_tui.export.tables import (
    POOLED,
    atlas_tables,
    contrast_tables,
    corpus_tables,
    error_tables,
    output_tables,
    scope_lines,
    sensitivity_tables,
    suite_tables,
    validity_tables,
)
from copal_tui.export.traceability import confusion_tables
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.rates import PATTERN_ORDER

INTERVAL = ("ci_low", "ci_high")  # how the names of a table's interval columns end
# Tables the overview shows pooled over targets only (the exports add a row per model).
POOLED_ONLY = ("controls", "ablation")


def f3(value: Any) -> str:
    return cell_text(value, "float", 3, NA)


def _interval_at(names: list[str], kinds: list[str], j: int) -> int | None:
    """Where float column j's interval starts (its low, the high right after): the column
    `{name}_ci_low`, else an interval pair right after column j."""
    if kinds[j] != "float":
        return None
    if f"{names[j]}_ci_low" in names:
        return names.index(f"{names[j]}_ci_low")
    return j + 1 if names[j + 1:j + 2] and names[j + 1].endswith(INTERVAL[0]) else None


def show(console: Console, t: Table, keys: int | None = None) -> None:
    """`t`'s display columns, each estimate with its interval in one cell. Int and float
    columns are numbers (right-aligned, never wrapped); the leading text columns (or the
    first `keys`) name a row."""
    names, kinds = [n for n, _k in t.columns], [k for _n, k in t.columns]
    shown = [names.index(n) for n, _k in t.view(narrow=True)[0] if not n.endswith(INTERVAL)]
    spans = {j: _interval_at(names, kinds, j) for j in shown}
    rows = []
    for row in t.rows:
        cells = []
        for j in shown:
            text, at = cell_text(row[j], kinds[j], 3, NA), spans[j]
            if at is not None and f3(row[at]) != NA and text != NA:
                text += f" [{f3(row[at])}, {f3(row[at + 1])}]"
            cells.append(text)
        rows.append(cells)
    numeric = {i for i, j in enumerate(shown) if kinds[j] in ("int", "float")}
    leading = next((i for i, j in enumerate(shown) if kinds[j] != "str"), len(shown))
    print_table(console, [names[j].replace("_", " ") for j in shown], rows, title=t.title,
                numeric=numeric, keys=leading if keys is None else keys, note=t.note)


def _caveat(console: Console, doc: ReportDocument, suite: str) -> None:
    """The heuristic caveat of a suite's figures, printed before them, in bold."""
    prov = (doc.scope.provenance or {}).get(suite)
    if prov is not None and prov.caveat:
        console.print(Text(visible(prov.caveat), style="bold reverse"))


def _pivot(console: Console, doc: ReportDocument, key: str, label: str) -> None:
    models = [r.model for r in doc.error_rates]
    keys = list(dict.fromkeys(k for r in doc.error_rates for k in getattr(r, key)))
    if key == "by_pattern":
        keys = [k for k in PATTERN_ORDER if k in keys] + [k for k in keys if k not in PATTERN_ORDER]
    rows = [[k, *(f3(cell.error_rate.value if (cell := getattr(r, key).get(k)) else None)
                  for r in doc.error_rates)] for k in keys]
    print_table(console, [label, *models], rows,
                title=f"Error rate by {label} (rows) and model (columns)",
                numeric=set(range(1, len(models) + 1)), letter_all=True)


def print_report(doc: ReportDocument, console: Console | None = None) -> None:
    console = console or terminal_console()
    for line in scope_lines(doc):
        console.print(Text(visible(line)))
    _caveat(console, doc, "copal")
    show(console, error_tables(doc)[0])  # its long forms by pattern, facet, world: pivots
    for key, label in (("by_pattern", "pattern"), ("by_facet", "facet"), ("by_world", "world")):
        _pivot(console, doc, key, label)
    for t in [*atlas_tables(doc), *contrast_tables(doc), *validity_tables(doc),
              *confusion_tables(doc), *sensitivity_tables(doc)]:
        if t.name in POOLED_ONLY:
            at = [name for name, _kind in t.columns].index("model")
            t.rows = [row for row in t.rows if row[at] == POOLED]
        show(console, t)
    print_observed_facets(console, doc)
    for name, section in doc.suites.items():  # each other suite, as its descriptor prints it
        _caveat(console, doc, name)
        report = SUITES[name].report
        if report is not None and report.terminal is not None:
            load(report.terminal)(console, doc, section)
            continue
        for t in suite_tables(doc, name):
            show(console, t)
    for t in [*corpus_tables(doc), *output_tables(doc)]:
        show(console, t)
