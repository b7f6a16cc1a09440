"""`copal export --out DIR` and the dashboard's export: the report (or the store, for jsonl)
written into a folder, then its manifest.

Besides the report, a report format writes the responses behind its judge-validity counts
(`validity_cases.csv`, `validity_cases.jsonl` for json; read by `copal_tui.services.cases`,
formatted by copal_tui.export.traceability). The jsonl format streams the store through
`copal_tui.interchange.exporter`. This module owns what touches the database; every file's
text comes from copal_tui.export, which reads no store.

Every target is checked (copal_tui.export.safe_paths) before anything is written, and all the
files are renamed into place together, the manifest last: a failed export leaves none of its
files behind, and a folder with a manifest (the sha256 of every other file) is complete.
"""

from __future__ import annotations

from pathlib import Path

from copal_tui.export import formats
from copal_tui.export.jsondoc import dumps
from copal_tui.export.manifest import StoreFacts, Vote, build_manifest
from copal_tui.export.plots import render_plots
from copal_tui.export.safe_paths import OutputGuard, Staging
from copal_tui.export.tables import report_tables, scope_lines
from copal_tui.export.traceability import case_files
from copal_tui.interchange import exporter
from copal_tui.metrics.document import ReportDocument
from copal_tui.metrics.document_copal import Exclusion
from copal_tui.services import reading
from copal_tui.services.cases import validity_cases
from store.db import Database, utcnow
from store.report import provenance, reads
from store.schema_state import schema_version

# Why the jsonl export leaves rows out, by what it leaves out.
UNEXPORTED_REASONS = {
    "responses": "the target model's call failed (no text); pipeline state, not a result",
    "judgments": "the judge call failed or gave no verdict",
}


def export_folder(db: Database, fmt: str, out: Path, doc: ReportDocument | None,
                  *, plots: bool = False,
                  guard: OutputGuard | None = None) -> tuple[list[Path], Path]:
    """Write `fmt` (csv, json, md, latex or jsonl) into `out`; returns the files written and
    the manifest's path.

    `doc` is the report (None for jsonl, which exports the store itself, not the report).
    `guard` says what may be written (default: no existing file); the file the connection has
    open is always protected.
    """
    guard = (guard or OutputGuard()).with_connection(db)
    if fmt == "jsonl":
        worlds, exclusions = None, _unexported(db)
        contents: dict[str, str | bytes] = {}  # relative path -> content
    else:
        assert doc is not None
        worlds, exclusions = doc.scope.worlds, doc.exclusions
        # The report, and every response behind its judge-validity counts.
        contents = {**report_files(doc, fmt), **case_files(validity_cases(db, doc), fmt)}
    if plots and doc is not None:
        contents.update({f"plots/{name}": data for name, data in render_plots(doc).items()})
    names = [*(["store.jsonl"] if fmt == "jsonl" else []), *contents]  # store.jsonl is streamed
    # Every target passes before the first byte is written: a refusal leaves the disk as it was.
    guard.check_folder(out)
    if plots:
        guard.check_folder(out / "plots")
    manifest_path = out / "manifest.json"
    for path in [*(out / name for name in names), manifest_path]:
        guard.check_file(path)
    written = [out / name for name in names]
    with Staging(guard) as staging:
        if fmt == "jsonl":
            with staging.writing(out / "store.jsonl", newline="\n") as fh:
                exporter.write_jsonl(db, fh)
        for name, data in contents.items():
            staging.write(out / name, data)
        manifest = build_manifest(store_facts(db, worlds), created_at=utcnow(), fmt=fmt,
                                  out=out, files=written, report=doc, exclusions=exclusions,
                                  content=staging.temporary)
        staging.write(manifest_path, dumps(manifest))
        staging.commit()
    return written, manifest_path


def report_files(doc: ReportDocument, fmt: str) -> dict[str, str]:
    """File name -> text of the report in `fmt`: csv one file per table, json `report.json`,
    md `report.md`, latex `report.tex`."""
    if fmt == "json":
        return {"report.json": dumps(doc)}
    tables = report_tables(doc)
    if fmt == "csv":
        return {f"{t.name}.csv": formats.table_csv(t) for t in tables}
    if fmt == "md":
        return {"report.md": formats.report_markdown(tables, formats.HEADING, scope_lines(doc))}
    if fmt == "latex":
        return {"report.tex": formats.report_latex(tables, formats.HEADING, scope_lines(doc))}
    raise ValueError(f"unknown report format {fmt!r}")


def store_facts(db: Database, worlds: list[str] | None) -> StoreFacts:
    """What the manifest states about the database, for the rows of `worlds` (None: all)."""
    with reading(db):
        return StoreFacts(
            schema_version=schema_version(db),
            quick_check=provenance.quick_check(db),
            runs=provenance.provenance_runs(db, worlds),
            labels=[Vote(*row) for row in reads.current_labels(db, worlds)],
            adjudications=[Vote(*row) for row in reads.current_labels(db, worlds, decisions=True)],
            known_worlds=reads.known_worlds(db))


def _unexported(db: Database) -> list[Exclusion]:
    """The rows the jsonl export leaves out, counted, each kind with its reason."""
    with reading(db):
        counts = provenance.unexported_counts(db)
    return [Exclusion(section="jsonl", what=what, reason=UNEXPORTED_REASONS[what], count=n)
            for what, n in counts if n]
