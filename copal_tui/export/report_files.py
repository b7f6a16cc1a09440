"""The report as the files of an export folder: `report_files` gives each file's name and
text in one format (csv: one file per table; json: `report.json`; md: `report.md`; latex:
`report.tex`), and `HEADING` is the title the Markdown and LaTeX documents carry.

Writing them (checked targets, staging, the validity cases and the manifest) is
`copal_tui.services.export`'s.
"""

from __future__ import annotations

from copal_tui.export import formats
from copal_tui.export.jsondoc import dumps
from copal_tui.export.tables import report_tables, scope_lines
from copal_tui.metrics.document import ReportDocument

HEADING = "copal report"


def report_files(doc: ReportDocument, fmt: str) -> dict[str, str]:
    """File name -> text of the report in `fmt` (csv, json, md or latex)."""
    if fmt == "json":
        return {"report.json": dumps(doc)}
    tables = report_tables(doc)
    if fmt == "csv":
        return {f"{t.name}.csv": formats.table_csv(t) for t in tables}
    if fmt == "md":
        return {"report.md": formats.report_markdown(tables, HEADING, scope_lines(doc))}
    if fmt == "latex":
        return {"report.tex": formats.report_latex(tables, HEADING, scope_lines(doc))}
    raise ValueError(f"unknown report format {fmt!r}")
