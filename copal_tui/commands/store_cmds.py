"""Store commands: init, migrate, import, schema, stats, backup (export lives in report_cmds)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import click

from copal_tui.commands.context import db_path, open_db
from store import reads
from store.db import StoreError, connect


@click.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create a database (or bring an existing one up to date)."""
    path = db_path(ctx)
    existed = path.exists()
    db = connect(path, create=True)
    applied = _migrations().migrate(db)
    state = "existing" if existed else "new"
    click.echo(f"{state} database {path}: {len(applied)} migration(s) applied")


@click.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Apply pending schema migrations."""
    db = open_db(ctx, current=False)
    todo = _migrations().pending(db)
    applied = _migrations().migrate(db)
    click.echo(f"{len(applied)} migration(s) applied" + (f": {', '.join(todo)}" if todo else ""))


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--from", "source",
              type=click.Choice(["copal", "compass", "complibench", "complibench-judge"]),
              default="copal", show_default=True,
              help="copal: world YAML and JSONL interchange files. compass: COMPASS scenario "
                   "folders (policies/<Org>.json, contexts/<Org>.txt, system_prompts/<Org>.txt), "
                   "one world per organisation. complibench: CompliBench conversation files or "
                   "folders (id <folder>/<stem>). complibench-judge: judge outputs "
                   "(<stem>_usage.json, <stem>_usage_attempt<k>.json), with --judge.")
@click.option("--judge", default=None, help="Judge name for --from complibench-judge.")
@click.option("--replace", is_flag=True,
              help="complibench-judge: overwrite an attempt already stored with other content.")
@click.pass_context
def import_(ctx: click.Context, paths: tuple[Path, ...], source: str, judge: str | None,
            replace: bool) -> None:
    """Import world YAML files, JSONL interchange files, or folders of both (one transaction).

    With --from compass, each PATH is a COMPASS scenario folder instead; with --from
    complibench / complibench-judge, CompliBench conversations / judge outputs.
    """
    db = open_db(ctx)
    if source.startswith("complibench"):
        _import_dialogues(db, paths, source, judge, replace)
        return
    if judge is not None or replace:
        raise click.UsageError("--judge and --replace go with --from complibench-judge")
    if source == "compass":
        from copal_tui.interchange.compass_import import import_compass

        counts = import_compass(db, list(paths))
    else:
        from copal_tui.interchange.importer import import_paths

        counts = import_paths(db, list(paths))
    total = sum(counts.values())
    detail = ", ".join(f"{n} {t}" for t, n in counts.items()) or "nothing new"
    click.echo(f"imported {total} record(s): {detail}")


def _import_dialogues(db: Any, paths: tuple[Path, ...], source: str, judge: str | None,
                      replace: bool) -> None:
    from copal_tui.interchange import complibench_import as ci

    if source == "complibench-judge" and not judge:
        raise click.UsageError("--from complibench-judge needs --judge NAME")
    if source == "complibench" and (judge or replace):
        raise click.UsageError("--judge and --replace go with --from complibench-judge")
    from store.db import write

    added = skipped = 0
    with write(db):  # every PATH or none: a bad file anywhere leaves the database as it was
        for path in paths:
            done = ci.import_conversations(db, path) if source == "complibench" else \
                ci.import_judge_outputs(db, path, judge or "", replace=replace)
            added, skipped = added + len(done.added), skipped + len(done.skipped)
    what = "conversation(s)" if source == "complibench" else f"attempt(s) of {judge}"
    click.echo(f"imported {added} {what}; {skipped} already stored identically")


@click.command()
@click.option("--kind", type=click.Choice(["all", "world", "record"]), default="all")
def schema(kind: str) -> None:
    """Print the JSON Schema of world files and interchange records."""
    from copal_tui.domain.schema import json_schemas

    schemas = json_schemas()
    doc: object = {"all": schemas, "world": schemas["world_file"],
                   "record": schemas["interchange_record"]}[kind]
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts of everything in the store."""
    db = open_db(ctx)
    counts = reads.stats(db)
    if as_json:
        click.echo(json.dumps(counts, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=str(db_path(ctx)))
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(key, str(value))
    Console().print(table)


@click.command()
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def backup(ctx: click.Context, out: Path) -> None:
    """Copy the database to OUT through SQLite's online backup API (safe while in use)."""
    if out.exists():
        raise StoreError(f"{out} already exists; choose a new file name")
    db = open_db(ctx, current=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    dest = sqlite3.connect(str(out))
    try:
        db.conn.backup(dest)
        check = dest.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        dest.close()
    click.echo(f"backed up {db_path(ctx)} to {out} (quick_check: {check})")


COMMANDS = [init, migrate, import_, schema, stats, backup]


def _migrations() -> Any:
    # sqlite-utils (which runs the migrations) costs ~0.25 s to import: only the commands that
    # migrate pay it, not every start of the CLI or the TUI.
    from store import migrations

    return migrations
