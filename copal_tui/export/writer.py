"""`copal export --out DIR`: write the report in one format into a folder, then the manifest.

Each file is written to a `.partial` name and renamed, so an interrupted export never leaves a
half-written file under its final name; the manifest is written last and lists the sha256 of
every other file, so a folder with a manifest is complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copal_tui.export.manifest import atomic_write, build_manifest, write_manifest
from copal_tui.export.tables import report_tables, scope_lines
from store.db import Database

FOLDER_FORMATS = ("csv", "json", "md", "latex", "jsonl")
HEADING = "copal report"


def report_files(doc: dict[str, Any], fmt: str) -> dict[str, str]:
    """File name -> text of the report in `fmt` (csv, json, md or latex)."""
    from copal_tui.export import formats
    from copal_tui.export.jsondoc import dumps

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


def export_folder(db: Database, fmt: str, out: Path, doc: dict[str, Any] | None,
                  *, plots: bool = False) -> tuple[list[Path], Path]:
    """Write `fmt` into `out`; returns the files written and the manifest's path.

    `doc` is the report (None for jsonl, which exports the store itself, not the report).
    """
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    worlds = None
    if fmt == "jsonl":
        from copal_tui.interchange.exporter import export_jsonl

        path = out / "store.jsonl"
        export_jsonl(db, path)
        written.append(path)
        exclusions = _unexported(db)
    else:
        assert doc is not None
        worlds = doc["scope"]["worlds"]
        for name, text in report_files(doc, fmt).items():
            path = out / name
            atomic_write(path, text)
            written.append(path)
        exclusions = doc["exclusions"]
    if plots and doc is not None:
        from copal_tui.export.plots import write_plots

        written += write_plots(doc, out / "plots")
    manifest = build_manifest(db, fmt=fmt, out=out, files=written, worlds=worlds, report=doc,
                              exclusions=exclusions)
    return written, write_manifest(out, manifest)


def _unexported(db: Database) -> list[dict[str, Any]]:
    from store import metrics_sql as q

    reasons = {"responses": "the target model's call failed (no text); pipeline state, "
                            "not a result",
               "judgments": "the judge call failed or gave no verdict"}
    return [{"section": "jsonl", "what": what, "reason": reasons[what], "count": n}
            for what, n in q.unexported_counts(db) if n]
