"""Store commands: init, migrate, import, schema, stats, backup, delete-attempts (export lives in
report_cmds)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from copal_tui.commands.context import db_path, open_db
from copal_tui.commands.suite_import import SourceChoice
from copal_tui.services import store_admin
from store.db import connect


@click.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create a database (or bring an existing one up to date)."""
    path = db_path(ctx)
    existed = path.exists() and path.stat().st_size > 0  # an empty file is initialised as new
    db = connect(path, create=True, access="write")
    ctx.call_on_close(db.close)  # as open_db does: no connection (and -wal file) left behind
    applied = store_admin.migrate(db)
    state = "existing" if existed else "new"
    click.echo(f"{state} database {path}: {len(applied)} migration(s) applied")


@click.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Apply pending schema migrations."""
    db = open_db(ctx, current=False, write=True)
    # What this run applied, read under the write lock: a migrate that ran meanwhile (another
    # process on the same file) leaves it none, and it says so.
    applied = store_admin.migrate(db)
    click.echo(f"{len(applied)} migration(s) applied" +
               (f": {', '.join(applied)}" if applied else " (the database was up to date)"))


def _import_help() -> str:
    from copal_tui.commands.suite_import import importer, importer_refs

    return " ".join(importer(name).help for name in importer_refs())


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--from", "source", type=SourceChoice(), default="copal", show_default=True,
              help=_import_help())
@click.option("--judge", default=None,
              help="The judge whose outputs the files are (the sources that take it).")
@click.option("--replace", is_flag=True,
              help="Overwrite a judge's output already stored with other content (the sources "
                   "that take it).")
@click.pass_context
def import_(ctx: click.Context, paths: tuple[Path, ...], source: str, judge: str | None,
            replace: bool) -> None:
    """Import world YAML files, JSONL interchange files, or folders of both (one transaction).

    --from names another suite's files (each source is listed under --from).
    """
    from copal_tui.commands.suite_import import check_flags, importer

    found = importer(source)
    wrong = check_flags(source, found, judge, replace)
    if wrong:
        raise click.UsageError(wrong)
    db = open_db(ctx)
    for line in found.run(db, paths, judge, replace):
        click.echo(line)


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
    """Counts of everything in the store, with clauses per policy rule beside the paper's."""
    db = open_db(ctx)
    counts = store_admin.stats(db)
    if as_json:
        click.echo(json.dumps(counts, indent=2))
        return
    from copal_tui.commands.output import print_table

    # The paper's figures (`paper_<key>`) are shown beside the store's `<key>`.
    paper = {k.removeprefix("paper_"): _shown(v) for k, v in counts.items()
             if k.startswith("paper_")}
    if {"clauses", "policy_rules", "clauses_per_rule"} <= paper.keys():
        paper["clauses_per_rule"] = (f"{paper['clauses']}/{paper['policy_rules']} = "
                                     f"{paper['clauses_per_rule']}")
    rows = [(k, _shown(v) + (f" (paper {paper[k]})" if k in paper else ""))
            for k, v in counts.items() if not k.startswith("paper_")]
    # The title is a path (any bytes but NUL and '/'): shown safely like any data.
    print_table(["what", "count"], rows, title=str(db_path(ctx)), right=["count"])


def _shown(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


@click.command()
# Not dir_okay=False: a folder is refused below, as one line like the rest; a str, since a
# Path drops the trailing / that says OUT is meant as a folder.
@click.argument("out_arg", metavar="OUT", type=click.Path())
@click.option("--force", is_flag=True,
              help="Replace OUT if it is an existing regular file (never the database itself, "
                   "its -wal/-shm files or anything that is not a regular file).")
@click.pass_context
def backup(ctx: click.Context, out_arg: str, force: bool) -> None:
    """Copy the database to OUT through SQLite's online backup API (safe while in use).

    The copy is made in a temporary file beside OUT and renamed onto it once complete, so an
    interrupted backup leaves nothing under OUT.
    """
    from copal_tui.commands.refusals import refusals_exit_2
    from copal_tui.export.safe_paths import OutputGuard, OutputRefused, Staging, names_folder

    db = open_db(ctx, current=False)
    guard = OutputGuard.for_database(db_path(ctx), force=force).with_connection(db)
    out = Path(out_arg)
    with refusals_exit_2(), Staging(guard) as staging:
        if names_folder(out_arg):  # made or not: never a file under a folder's name
            raise OutputRefused(f"refusing to write {out_arg}: it names a folder, and a backup "
                                "is one file (name the file inside it)")
        check = store_admin.backup(db, staging.reserve(out, database=True))
        staging.commit()
    click.echo(f"backed up {db_path(ctx)} to {out} (quick_check: {check})")


@click.command("delete-attempts")
@click.option("--judge", required=True, metavar="JUDGE",
              help="The dialogue judge whose attempts to delete, as stored (a --binary run's "
                   "are JUDGE+binary).")
@click.option("--domain", "domains", multiple=True, metavar="DOMAIN",
              help="Only dialogues of this domain (repeatable; default: every dialogue).")
@click.option("--dialogue", "dialogue_ids", multiple=True, metavar="ID",
              help="Only this dialogue (repeatable).")
@click.option("--yes", is_flag=True, help="Delete without asking first.")
@click.pass_context
def delete_attempts(ctx: click.Context, judge: str, domains: tuple[str, ...],
                    dialogue_ids: tuple[str, ...], yes: bool) -> None:
    """Delete a judge's stored dialogue attempts, so `copal run dialogue_judge` asks again.

    Their predictions go with them. Attempts with human reviews are not deleted (the review
    log is kept whole): the command refuses and deletes nothing.
    """
    from copal_tui.commands.choices import BadValue, require_known
    from copal_tui.commands.output import echo
    from copal_tui.services import dialogue_attempts, launch

    db = open_db(ctx, write=True)
    require_known("--judge", [judge], dialogue_attempts.attempt_judges(db),
                  "a judge with stored dialogue attempts", none_yet="copal run dialogue_judge")
    require_known("--domain", domains, launch.dialogue_domains(db), "a stored dialogue domain")
    require_known("--dialogue", dialogue_ids, launch.dialogue_ids(db), "a stored dialogue")
    found = dialogue_attempts.selection(db, judge, domains, dialogue_ids)
    if not found.attempts:
        raise BadValue(f"--judge {judge}: no stored attempt on the dialogues named")
    if found.reviews:
        raise BadValue(f"not deleted: {dialogue_attempts.Reviewed(found)}")
    what = (f"{found.attempts} attempt(s) of {judge} on {found.dialogues} dialogue(s), "
            f"with {found.predictions} prediction(s)")
    if not yes:
        click.confirm(f"delete {what}?", abort=True, err=True)
    try:
        done = dialogue_attempts.delete(db, judge, domains, dialogue_ids)
    except dialogue_attempts.Reviewed as exc:  # a review written since the count
        raise BadValue(f"not deleted: {exc}") from exc
    echo(f"deleted {done.attempts} attempt(s) of {judge} on {done.dialogues} dialogue(s), "
         f"with {done.predictions} prediction(s): copal run dialogue_judge asks again")


COMMANDS = [init, migrate, import_, schema, stats, backup, delete_attempts]

