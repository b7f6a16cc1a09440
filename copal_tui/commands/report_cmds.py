"""Report commands: `copal report` (terminal, JSON, md/csv/latex on stdout, plots) and
`copal export` (the store as JSONL, or the report as csv/json/md/latex in a folder + manifest).

`export --format jsonl --out FILE` (or `-` for stdout) writes the store to FILE; given an
existing folder (or a path ending in '/') it writes store.jsonl plus a manifest instead. Every
export goes through copal_tui.export.safe_paths: never onto the database (or its -wal/-shm) or
a non-regular file, onto an existing file only with --force; a refusal is exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copal_tui.commands.context import db_path, open_db
from copal_tui.commands.output import json_stdout, write_document, write_json
from copal_tui.domain.safe_text import visible

if TYPE_CHECKING:
    from copal_tui.export.safe_paths import OutputGuard
    from copal_tui.metrics.document import ReportDocument

MODES = ("contract", "full_policy")


def _report_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--world", "worlds", multiple=True, metavar="ID",
                     help="Only this world (repeatable; default: all)."),
        click.option("--judge", default=None, metavar="JUDGE",
                     help="Primary judge (default: the judge with the most usable judgments "
                          "in --judge-mode)."),
        click.option("--judge-mode", type=click.Choice(MODES), default="contract",
                     show_default=True, help="Mode of the primary judge."),
        click.option("--reference-judge", default=None, metavar="JUDGE[@MODE]",
                     help="Reference for judge-family sensitivity (default: the primary)."),
        click.option("--bootstrap", type=click.IntRange(min=0), default=1000,
                     show_default=True, help="Bootstrap resamples for judge-validity CIs."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of the bootstrap."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _build(ctx: click.Context, worlds: tuple[str, ...], judge: str | None, judge_mode: str,
           reference_judge: str | None, bootstrap: int, seed: int
           ) -> tuple[Any, ReportDocument]:
    from copal_tui.metrics.options import ReportError, ReportOptions
    from copal_tui.services.report import build_document

    db = open_db(ctx)
    opts = ReportOptions(worlds=tuple(worlds), judge=judge, mode=judge_mode,
                         reference_judge=reference_judge, bootstrap=bootstrap, seed=seed)
    try:
        return db, build_document(db, opts)
    except ReportError as exc:
        # The message may list the judge settings stored, i.e. data: shown safely.
        raise click.UsageError(visible(str(exc))) from exc


def _plots(doc: ReportDocument, out: Path) -> list[Path]:
    from copal_tui.export.plots import PlotsUnavailable, write_plots

    try:
        return write_plots(doc, out)
    except PlotsUnavailable as exc:
        raise click.ClickException(str(exc)) from exc


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "latex"]), default=None,
              help="Print the report in this format instead of terminal tables.")
@_report_options
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Also write PNG and SVG figures into this folder "
                                 "(needs the optional extra: pip install 'copal[plots]').")
@click.pass_context
def report(ctx: click.Context, as_json: bool, fmt: str | None, plots_dir: Path | None,
           **kw: Any) -> None:
    """Error tables, facet atlas, paired contrast, judge validity, agreement, sensitivity."""
    if as_json and fmt:
        raise click.UsageError("give --json or --format, not both")
    _db, doc = _build(ctx, **kw)
    if plots_dir is not None:
        written = _plots(doc, plots_dir)
        click.echo(f"wrote {len(written)} figure file(s) to {plots_dir}", err=True)
    if as_json:
        from copal_tui.export.jsondoc import dumps

        write_json(dumps(doc))
        return
    if fmt is None:
        from copal_tui.export.terminal import print_report

        print_report(doc)
        return
    from copal_tui.export.tables import report_tables, scope_lines

    tables = report_tables(doc)
    from copal_tui.export import formats
    from copal_tui.export.formats import HEADING

    text = {"md": lambda: formats.report_markdown(tables, HEADING, scope_lines(doc)),
            "csv": lambda: formats.tables_csv_stream(tables),
            "latex": lambda: formats.report_latex(tables, HEADING, scope_lines(doc))}[fmt]()
    write_document(text)


@click.command()
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "json", "md", "latex"]),
              default="jsonl", show_default=True,
              help="jsonl: the store as interchange records; others: the report.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="jsonl: output file (- for standard output) or a folder; others: a folder.")
@_report_options
@click.option("--plots", "with_plots", is_flag=True,
              help="Also write figures into OUT/plots (report formats only).")
@click.option("--force", is_flag=True,
              help="Replace existing output files (never the database, its -wal/-shm files "
                   "or anything that is not a regular file).")
@click.pass_context
def export(ctx: click.Context, fmt: str, out: Path, with_plots: bool, force: bool,
           **kw: Any) -> None:
    """Export the store (jsonl) or the report (csv, json, md, latex) with a manifest."""
    from copal_tui.commands.refusals import refusals_exit_2
    from copal_tui.export.safe_paths import OutputGuard

    guard = OutputGuard.for_database(db_path(ctx), force=force)
    folder = out.is_dir() or str(out).endswith(("/", "\\"))
    if fmt == "jsonl":
        if with_plots or kw["worlds"]:
            raise click.UsageError("--format jsonl exports the whole store; --plots and "
                                   "--world go with a report format (csv, json, md, latex)")
        if not folder:
            _export_jsonl_file(ctx, out, guard)
            return
    elif str(out) == "-":
        raise click.UsageError(f"--format {fmt} writes a folder; {out} is not one")
    from copal_tui.export.plots import PlotsUnavailable
    from copal_tui.services.export import export_folder

    with refusals_exit_2():
        guard.check_folder(out)  # before the report is built: a refusal costs nothing
        if fmt == "jsonl":
            db, doc = open_db(ctx), None
        else:
            db, doc = _build(ctx, **kw)
        try:
            written, manifest = export_folder(db, fmt, out, doc, plots=with_plots, guard=guard)
        except PlotsUnavailable as exc:
            raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {len(written)} file(s) and {manifest.name} to {out}", err=True)


def _export_jsonl_file(ctx: click.Context, out: Path, guard: OutputGuard) -> None:
    from copal_tui.commands.refusals import refusals_exit_2
    from copal_tui.interchange.exporter import export_jsonl, write_jsonl

    db = open_db(ctx)
    if str(out) == "-":
        write_jsonl(db, json_stdout())  # C1/bidi/zero-width escaped; --out FILE keeps all
        return
    with refusals_exit_2():
        counts = export_jsonl(db, out, guard)
    click.echo(f"wrote {sum(counts.values())} record(s) to {out}", err=True)


COMMANDS = [report, export]
