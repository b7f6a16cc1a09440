"""Shared helpers for subcommands: opening the database the way each command needs, and the
choices several commands share (`--suite`, the judge modes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from copal_tui.commands.choices import Registered
from copal_tui.domain.suites import SUITES
from copal_tui.domain.taxonomy import JudgeMode
from store.db import Database, connect
from store.schema_state import require_current

if TYPE_CHECKING:
    from copal_tui.services.launch import Filled

# Commands that write to the database: they refuse a read-only one up front (one line, exit 2)
# instead of failing at their first write. Every other command opens a read-only database
# read-only. The list lives here because the commands are spread over several modules and
# this is the one place that opens the database for all of them.
WRITING_COMMANDS = frozenset({"init", "migrate", "import", "run", "label", "adjudicate"})
# A judge's mode as stored (`full_policy`; `full-policy` spells it too, as every choice).
JUDGE_MODES = tuple(m.value for m in JudgeMode)


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


class SuiteChoice(Registered):
    """`--suite NAME`: one of the registered suites (copal_tui.domain.suites), read when the
    option is parsed, so a suite registered after this module loaded is a choice too."""

    def __init__(self) -> None:
        super().__init__(lambda: SUITES)


def missing_step(fill: Filled) -> str:
    """What the store lacks before a COPAL figure can be shown, and the command that adds it
    ('' when every step has data)."""
    if not fill.worlds:
        return ("the store is empty: `copal import PATH` adds worlds (`copal import --from "
                "complibench PATH` dialogues; `copal demo` builds an example store)")
    if not fill.items:
        return ("no test items yet: `copal run ground compose generate select --generator MODEL`"
                " builds them")
    if not fill.responses:
        return "no responses yet: `copal run respond --model MODEL` answers the selected items"
    if not fill.judgments:
        return "no judgments yet: `copal run judge --judge MODEL` judges the responses"
    return ""
