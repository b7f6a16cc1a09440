"""Shared helpers for subcommands: opening the database the way each command needs."""

from __future__ import annotations

from pathlib import Path

import click

from store.db import Database, connect
from store.schema_state import require_current

# Commands that write to the database: they refuse a read-only one up front (one line, exit 2)
# instead of failing at their first write. Every other command opens a read-only database
# read-only. The list lives here because the commands are spread over several modules and
# this is the one place that opens the database for all of them.
WRITING_COMMANDS = frozenset({"init", "migrate", "import", "run", "label", "adjudicate"})


def db_path(ctx: click.Context) -> Path:
    return Path(ctx.obj["db_path"])


def open_db(ctx: click.Context, *, current: bool = True, write: bool | None = None) -> Database:
    """Open an existing database; with `current`, refuse one that has pending migrations.

    `write` (default: whether the command is in `WRITING_COMMANDS`) refuses a read-only
    database; otherwise one is opened read-only.
    """
    if write is None:
        write = ctx.command.name in WRITING_COMMANDS
    db = connect(db_path(ctx), access="write" if write else "auto")
    # Closed when the command ends, not whenever the collector gets to it: a connection left
    # open (a function registered on it makes a reference cycle) keeps the -wal file alive.
    ctx.call_on_close(db.close)
    if current:
        require_current(db)
    return db
