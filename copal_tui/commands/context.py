"""Shared helpers for subcommands: opening the database the way each command needs."""

from __future__ import annotations

from pathlib import Path

import click
from sqlite_utils import Database

from store.db import connect
from store.migrations import require_current


def db_path(ctx: click.Context) -> Path:
    return Path(ctx.obj["db_path"])


def open_db(ctx: click.Context, *, current: bool = True) -> Database:
    """Open an existing database; with `current`, refuse one that has pending migrations."""
    db = connect(db_path(ctx))
    if current:
        require_current(db)
    return db
