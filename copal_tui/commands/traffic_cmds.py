"""The traffic suite's commands: `copal traffic import` (a deployed chatbot's log, de-identified
before anything is stored), `copal traffic imports` (what each import read, kept and removed)
and `copal traffic purge` (remove pairs' text for good). Sampling, labelling, the automatic
labeller and the figures go through the commands every suite shares: `copal campaign create
--suite traffic`, `copal label --suite traffic`, `copal run traffic_judge`, `copal report`,
`copal cases --suite traffic`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import BadValue, require_known
from copal_tui.commands.context import open_db
from copal_tui.commands.output import echo, print_table
from copal_tui.domain.safe_text import visible

if TYPE_CHECKING:
    from copal_tui.domain.deid import RedactionRules
    from copal_tui.services.traffic import Progress
    from store.db import Database

FORMATS = ("auto", "pairs", "transcripts", "csv")


@click.group()
def traffic() -> None:
    """Audit a deployed chatbot's real traffic (the COPAL paper's Table 11)."""



@traffic.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--source", required=True,
              help="Name of the log's source (a channel or deployment: web, app, ...); the "
                   "figures are also given per source.")
@click.option("--world", default=None,
              help="The stored world whose policies the chatbot follows (annotators may then "
                   "name the policies a pair engages; the automatic labeller needs it).")
@click.option("--format", "layout", type=click.Choice(FORMATS), default="auto",
              show_default=True,
              help="pairs: JSONL of {query, response}; transcripts: JSONL of {messages: "
                   "[{role, content}]}, each assistant turn a pair; csv: a header, then one "
                   "pair per row; auto: by the file.")
@click.option("--query-field", default="query", show_default=True,
              help="The query's field (JSONL pairs) or column (CSV).")
@click.option("--response-field", default="response", show_default=True,
              help="The response's field (JSONL pairs) or column (CSV).")
@click.option("--messages-field", default="messages", show_default=True,
              help="The messages' field of a transcript.")
@click.option("--redactions", "redactions", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A redaction file (YAML): extra patterns to remove and known names "
                   "(see docs/traffic.md).")
@click.option("--phone-region", default=None,
              help="Region of phone numbers written without a country code (ISO code such as "
                   "GB or US; default from the redaction file, else GB).")
@click.pass_context
def import_log(ctx: click.Context, path: Path, source: str, world: str | None, layout: str,
               query_field: str, response_field: str, messages_field: str,
               redactions: Path | None, phone_region: str | None) -> None:
    """De-identify and store a chatbot's log (one transaction: a bad record stores nothing)."""
    from copal_tui.interchange.traffic_log import Fields
    from copal_tui.services.traffic import import_log as run_import

    db = open_db(ctx, write=True)
    rules, region = _checked_options(db, source, world, redactions, phone_region)
    with _progress(path) as on_progress:
        summary = run_import(
            db, path, source=source, world=world, layout=layout,
            fields=Fields(query_field, response_field, messages_field), rules=rules,
            phone_region=region, on_progress=on_progress)
    removed = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.redactions.items()))
    echo(f"imported {summary.stored} pair(s) from {summary.records} record(s) of {path.name} "
         f"as source {source} ({summary.layout}); {summary.duplicates} duplicate(s) skipped; "
         f"removed: {removed or 'nothing'} ({summary.import_id})")


def _checked_options(db: Database, source: str, world: str | None, redactions: Path | None,
                     phone_region: str | None) -> tuple[RedactionRules | None, str | None]:
    """The import's options checked before the log is read: each bad one is exit 2 naming it
    (a world that is not stored, with the closest ids; a redaction file's line)."""
    from copal_tui.domain.deid import RulesError, check_region, load_rules
    from copal_tui.services import launch

    if not source.strip():
        raise BadValue("--source: a source name is needed (a channel or deployment: web, app)")
    if world is not None:
        require_known("--world", [world], launch.worlds(db), "a stored world",
                      none_yet="`copal import WORLD.yaml` adds one")
    try:
        rules = load_rules(redactions) if redactions is not None else None
    except RulesError as exc:
        raise BadValue(f"--redactions {exc}") from None
    try:
        region = check_region(phone_region) if phone_region is not None else None
    except ValueError as exc:
        raise BadValue(f"--phone-region: {exc}") from None
    return rules, region


@contextmanager
def _progress(path: Path) -> Iterator[Progress | None]:
    """A progress bar of the lines read, on stderr (the summary line alone is the command's
    output) and only on a terminal: written elsewhere it would leave lines around an error."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as Bar

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    with Bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
             TextColumn("lines"), console=console, transient=True) as bar:
        # A file's name is the user's, but shown through the same guard as data.
        task = bar.add_task(escape(visible(f"de-identifying {path.name}")), total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@traffic.command("imports")
@click.pass_context
def imports(ctx: click.Context) -> None:
    """Each import: its source, world, file, what it read and kept, and what was removed."""
    from copal_tui.services.traffic_review import imports as stored_imports

    rows = [[i.id, i.source, i.world_id or "", i.file_name, i.layout, str(i.records),
             str(i.pairs), str(i.duplicates),
             ", ".join(f"{k} {n}" for k, n in sorted(i.redactions.items())) or "-"]
            for i in stored_imports(open_db(ctx))]
    if not rows:
        echo("no traffic log imported yet: `copal traffic import LOG --source NAME` adds one")
        return
    print_table(["import", "source", "world", "file", "format", "records", "pairs",
                       "duplicates", "removed"], rows, title="Traffic imports",
                right=("records", "pairs", "duplicates"))


@traffic.command("purge")
@click.option("--flagged", is_flag=True,
              help="Every pair an annotator flagged as still holding sensitive content.")
@click.option("--pair", "pairs", multiple=True, help="A pair id (repeatable).")
@click.option("--yes", is_flag=True, help="Do not ask first.")
@click.pass_context
def purge(ctx: click.Context, flagged: bool, pairs: tuple[str, ...], yes: bool) -> None:
    """Remove pairs' text for good (their labels and counts stay; nothing can restore it)."""
    from copal_tui.services.traffic_review import purge as run_purge
    from copal_tui.services.traffic_review import purge_targets

    if not flagged and not pairs:
        raise click.UsageError("name the pairs: --flagged, or --pair ID (repeatable)")
    from store.db import StoreError

    db = open_db(ctx, write=True)
    try:
        targets = purge_targets(db, flagged=flagged, pairs=pairs)
    except StoreError as exc:  # a --pair that names no stored pair: nothing is purged
        raise BadValue(f"--pair: {exc}") from None
    if not targets:
        echo("no flagged pair holds text: nothing to purge")
        return
    if not yes:
        click.confirm(f"Remove the text of {len(targets)} pair(s) for good?", abort=True)
    echo(f"purged the text of {run_purge(db, targets)} pair(s)")


COMMANDS = [traffic]
