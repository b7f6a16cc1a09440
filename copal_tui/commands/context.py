"""Shared helpers for subcommands: opening the database the way each command needs."""

from __future__ import annotations

from pathlib import Path

import click

from store.db import Database, connect
from store.schema_state import require_current


def db_path(ctx: click.Context) -> Path:
    return Path(ctx.obj["db_path"])


def open_db(ctx: click.Context, *, current: bool = True) -> Database:
    """Open an existing database; with `current`, refuse one that has pending migrations."""
    db = connect(db_path(ctx))
    if current:
        require_current(db)
    return db
