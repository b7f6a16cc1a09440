"""Shared helpers for subcommands: opening the database the way each command needs, and the
`--suite` choice."""

from __future__ import annotations

from pathlib import Path

import click

from copal_tui.domain.suites import SUITES
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


class SuiteChoice(click.Choice):
    """`--suite NAME`: one of the registered suites (copal_tui.domain.suites), read when the
    option is parsed, so a suite registered after this module loaded is a choice too."""

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(SUITES)

    @choices.setter
    def choices(self, _value: object) -> None:
        pass  # the registry is the list
