"""`copal export --out DIR`: write the report in one format into a folder, then the manifest.

Besides the report, a report format writes the responses behind its judge-validity counts
(copal_tui.export.traceability: `validity_cases.csv`, `validity_cases.jsonl` for json).

Every target is checked (copal_tui.export.safe_paths) before anything is written: never the
database or its -wal/-shm files, never a non-regular file, an existing file only with `force`.
Each file is then written to a temporary beside it and all are renamed into place together, the
manifest last, so a failed export leaves none of its files behind; the manifest lists the sha256
of every other file, so a folder with a manifest is complete.
"""

from __future__ import annotations

from pathlib import Path

from copal_tui.export.manifest import build_manifest
from copal_tui.export.safe_paths import OutputGuard, Staging
from copal_tui.export.tables import report_tables, scope_lines
from copal_tui.export.traceability import case_files
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_sections import Exclusion
from store.db import Database

FOLDER_FORMATS = ("csv", "json", "md", "latex", "jsonl")
HEADING = "copal report"


def report_files(doc: ReportDocument, fmt: str) -> dict[str, str]:
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


def export_folder(db: Database, fmt: str, out: Path, doc: ReportDocument | None,
                  *, plots: bool = False,
                  guard: OutputGuard | None = None) -> tuple[list[Path], Path]:
    """Write `fmt` into `out`; returns the files written and the manifest's path.

    `doc` is the report (None for jsonl, which exports the store itself, not the report).
    `guard` says what may be written (default: no existing file); the file the connection has
    open is always protected.
    """
    from copal_tui.export.jsondoc import dumps

    guard = (guard or OutputGuard()).with_connection(db)
    contents: dict[str, str | bytes] = {}  # relative path -> content (store.jsonl is streamed)
    worlds = None
    if fmt == "jsonl":
        names = ["store.jsonl"]
        exclusions = _unexported(db)
    else:
        assert doc is not None
        worlds = doc.scope.worlds
        contents.update(report_files(doc, fmt))
        # Every response behind the judge-validity counts, listed and checksummed like the rest.
        contents.update(case_files(db, doc, fmt))
        names = list(contents)
        exclusions = doc.exclusions
    if plots and doc is not None:
        from copal_tui.export.plots import render_plots

        figures = {f"plots/{name}": data for name, data in render_plots(doc).items()}
        contents.update(figures)
        names += list(figures)
    # Every target passes before the first byte is written: a refusal leaves the disk as it was.
    guard.check_folder(out)
    if plots:
        guard.check_folder(out / "plots")
    manifest_path = out / "manifest.json"
    for name in [*names, manifest_path.name]:
        guard.check_file(out / name)
    written = [out / name for name in names]
    with Staging(guard) as staging:
        if fmt == "jsonl":
            from copal_tui.interchange.exporter import write_jsonl

            with staging.writing(out / "store.jsonl", newline="\n") as fh:
                write_jsonl(db, fh)
        for name, data in contents.items():
            staging.write(out / name, data)
        manifest = build_manifest(db, fmt=fmt, out=out, files=written, worlds=worlds,
                                  report=doc, exclusions=exclusions, content=staging.temporary)
        staging.write(manifest_path, dumps(manifest))
        staging.commit()
    return written, manifest_path


def _unexported(db: Database) -> list[Exclusion]:
    from store.report import provenance

    reasons = {"responses": "the target model's call failed (no text); pipeline state, "
                            "not a result",
               "judgments": "the judge call failed or gave no verdict"}
    return [Exclusion(section="jsonl", what=what, reason=reasons[what], count=n)
            for what, n in provenance.unexported_counts(db) if n]
