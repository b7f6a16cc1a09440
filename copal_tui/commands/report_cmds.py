"""Report commands: `copal report` (terminal, JSON, md/csv/latex on stdout, plots) and
`copal export` (the store as JSONL, or the report as csv/json/md/latex in a folder + manifest).

`export --format jsonl --out FILE` (or `-` for stdout) writes the store to FILE; given a
folder (an existing one, or a path ending in '/', made if missing) it writes store.jsonl plus a
manifest instead, as every report format does. Every
export goes through copal_tui.export.safe_paths: never onto the database (or its -wal/-shm) or
a non-regular file, onto an existing file only with --force; a refusal is exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copal_tui.commands.choices import BadValue, NothingYet, require_known
from copal_tui.commands.context import JUDGE_MODES, db_path, missing_step, open_db
from copal_tui.commands.output import json_stdout, write_document, write_json
from copal_tui.domain.spelling import spelled_suffix

if TYPE_CHECKING:
    from copal_tui.export.safe_paths import OutputGuard
    from copal_tui.metrics.document import ReportDocument


# What `_report_options` adds, by parameter name.
REPORT_OPTIONS = ("worlds", "judge", "judge_mode", "reference_judge", "bootstrap", "seed")


def _report_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--world", "worlds", multiple=True, metavar="ID",
                     help="Only this world (repeatable; default: all)."),
        click.option("--judge", default=None, metavar="JUDGE",
                     help="Primary judge (default: the judge with the most usable judgments "
                          "in --judge-mode)."),
        click.option("--judge-mode", type=click.Choice(JUDGE_MODES), default="contract",
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
           reference_judge: str | None, bootstrap: int, seed: int, *, empty_ok: bool = True
           ) -> tuple[Any, ReportDocument]:
    """The report document; with `empty_ok` False, NothingYet when the store has nothing to
    report (the terminal's tables would all be empty)."""
    from copal_tui.metrics.options import ReportError, ReportOptions
    from copal_tui.services.report import build_document

    db = open_db(ctx)
    if reference_judge is not None:
        reference_judge = spelled_suffix(reference_judge, JUDGE_MODES)
    _check_names(db, worlds, judge, reference_judge)
    if not empty_ok and not worlds:
        _say_if_nothing(db)
    opts = ReportOptions(worlds=tuple(worlds), judge=judge, mode=judge_mode,
                         reference_judge=reference_judge, bootstrap=bootstrap, seed=seed)
    try:
        return db, build_document(db, opts)
    except ReportError as exc:  # a judge without usable judgments in the mode or worlds asked
        raise BadValue(str(exc)) from None


def _say_if_nothing(db: Any) -> None:
    """NothingYet when the store has no world and no judged dialogue: what is missing."""
    from copal_tui.services.launch import filled

    fill = filled(db)
    if fill.worlds or fill.judged_dialogues:
        return
    raise NothingYet("nothing to report yet: " + (
        "no dialogue is judged: `copal run dialogue_judge --judge MODEL` judges the stored "
        "dialogues" if fill.dialogues else missing_step(fill)))


def _check_names(db: Any, worlds: tuple[str, ...], judge: str | None,
                 reference_judge: str | None) -> None:
    """Each world and judge named is stored (else exit 2 with the closest names)."""
    from copal_tui.metrics.options import parse_setting
    from copal_tui.services import launch

    require_known("--world", worlds, launch.worlds(db), "a stored world",
                  none_yet="`copal import PATH` adds worlds")
    judges = launch.judges(db) if judge is not None or reference_judge is not None else []
    hint = "`copal run judge --judge MODEL` judges the responses"
    if judge is not None:
        require_known("--judge", [judge], judges, "a judge with judgments", none_yet=hint)
    if reference_judge is not None:
        require_known("--reference-judge", [parse_setting(reference_judge)[0]], judges,
                      "a judge with judgments", none_yet=hint)


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
    _db, doc = _build(ctx, **kw, empty_ok=as_json)  # JSON: the document, nulls with reasons
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
@click.option("--out", "out_arg", type=click.Path(), required=True,
              help="jsonl: output file (- for standard output) or a folder (one ending in / "
                   "is made); others: a folder.")
@_report_options
@click.option("--plots", "with_plots", is_flag=True,
              help="Also write figures into OUT/plots (report formats only).")
@click.option("--force", is_flag=True,
              help="Replace existing output files (never the database, its -wal/-shm files "
                   "or anything that is not a regular file).")
@click.pass_context
def export(ctx: click.Context, fmt: str, out_arg: str, with_plots: bool, force: bool,
           **kw: Any) -> None:
    """Export the store (jsonl) or the report (csv, json, md, latex) with a manifest."""
    from copal_tui.commands.refusals import refusals_exit_2
    from copal_tui.export.safe_paths import OutputGuard, names_folder

    guard = OutputGuard.for_database(db_path(ctx), force=force)
    out, folder = Path(out_arg), names_folder(out_arg)  # the typed text keeps a trailing /
    if fmt == "jsonl":
        _refuse_report_options(ctx)
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


def _refuse_report_options(ctx: click.Context) -> None:
    """`export --format jsonl` writes the whole store: an option of the report's typed with it
    would be ignored, so it is refused."""
    from click.core import ParameterSource

    report_only = {*REPORT_OPTIONS, "with_plots"}
    given = [p.opts[0] for p in ctx.command.params if p.name in report_only
             and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
    if given:
        raise BadValue(f"{', '.join(given)}: --format jsonl exports the whole store; these go "
                       "with a report format (csv, json, md, latex)")


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
