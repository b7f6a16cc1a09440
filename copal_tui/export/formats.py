"""CSV, Markdown and LaTeX renderings of the report tables, with fixed number formatting.

- CSV: RFC 4180 (comma, double-quote quoting, CRLF line ends), UTF-8 without BOM, one header
  row, no index column; floats with 6 decimals, undefined values as empty cells (pandas reads
  them as NaN), booleans as true/false.
- Markdown: pipe tables, floats with 3 decimals, undefined values as n/a, `|` escaped.
- LaTeX: one compilable document (article, longtable so long tables break across pages; only
  packages of every TeX distribution), every special character escaped, floats with 3 decimals.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from copal_tui.export.table import Table

NA = "n/a"
HEADING = "copal report"  # the title of the Markdown and LaTeX documents


def cell_text(value: Any, kind: str, decimals: int, missing: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    if kind == "bool" or isinstance(value, bool):
        return "true" if value else "false"
    if kind == "float":
        return f"{float(value):.{decimals}f}"
    return str(int(value)) if kind == "int" else str(value)


# ------------------------------------------------------------------ CSV


def table_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow([name for name, _kind in table.columns])
    writer.writerows([cell_text(v, kind, 6, "") for v, (_n, kind) in zip(row, table.columns,
                                                                          strict=True)]
                     for row in table.rows)
    return buf.getvalue()


def tables_csv_stream(tables: Sequence[Table]) -> str:
    """Every table on one stream (for `copal report --format csv`): a `# name` line before each
    table and a blank line between them. Files written by `copal export` are plain CSV."""
    return "\r\n".join(f"# {t.name}\r\n{table_csv(t)}" for t in tables)


def _cells(row: list[Any], columns: list[tuple[str, str]],
           escape: Callable[[str], str]) -> list[str]:
    """A row of a Markdown or LaTeX table as escaped text."""
    return [escape(cell_text(v, k, 3, NA)) for v, (_n, k) in zip(row, columns, strict=True)]


# ------------------------------------------------------------------ Markdown


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table_markdown(table: Table) -> str:
    columns, rows = table.view(narrow=True)
    lines = [f"## {_md_escape(table.title)}", ""]
    if not rows:
        return "\n".join([*lines, "(no rows)", ""])
    lines += [_md_row(_md_escape(name) for name, _k in columns),
              _md_row("---:" if k in ("int", "float") else "---" for _n, k in columns),
              *(_md_row(_cells(row, columns, _md_escape)) for row in rows)]
    if table.note:
        lines += ["", f"*{_md_escape(table.note)}*"]
    return "\n".join([*lines, ""])


def report_markdown(tables: Sequence[Table], heading: str, intro: Sequence[str] = ()) -> str:
    head = f"# {_md_escape(heading)}\n\n" + "".join(f"{_md_escape(line)}\n" for line in intro)
    return head + ("\n" if intro else "") + "\n".join(table_markdown(t) for t in tables)


# ------------------------------------------------------------------ LaTeX

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "\n": " ", "\r": " ",
}


def latex_escape(text: str) -> str:
    """Escape every character LaTeX treats specially (one pass, so escapes are not re-escaped)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


# Free-text columns wrap in a paragraph column instead of running off the page.
_WRAPPED = ("what", "ranking", "annotators", "adjudicators")


def _latex_spec(name: str, kind: str) -> str:
    if kind in ("int", "float"):
        return "r"
    return "p{5cm}" if name in _WRAPPED or name.endswith("reason") else "l"


def table_latex(table: Table) -> str:
    columns, rows = table.view(narrow=True)
    out = [f"\\section*{{{latex_escape(table.title)}}}"]
    if not rows:
        return "\n".join([*out, "(no rows)", ""])
    spec = "".join(_latex_spec(name, kind) for name, kind in columns)
    out += [f"\\begin{{longtable}}{{{spec}}}", r"\hline",
            " & ".join(latex_escape(name) for name, _k in columns) + r" \\", r"\hline",
            r"\endhead", *(" & ".join(_cells(r, columns, latex_escape)) + r" \\" for r in rows),
            r"\hline", r"\end{longtable}"]
    if table.note:
        out.append(f"\\noindent\\emph{{{latex_escape(table.note)}}}")
    return "\n".join([*out, ""])


def report_latex(tables: Sequence[Table], heading: str, intro: Sequence[str] = ()) -> str:
    preamble = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage[landscape,margin=1.5cm]{geometry}",
        r"\usepackage{longtable}",
        r"\setlength{\tabcolsep}{3pt}",
        r"\begin{document}",
        r"\footnotesize",
        f"\\section*{{{latex_escape(heading)}}}",
        *(f"{latex_escape(line)}\\par" for line in intro),
        "",
    ]
    return "\n".join(preamble) + "\n".join(table_latex(t) for t in tables) + "\\end{document}\n"
