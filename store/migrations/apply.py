"""Applying the registered migrations with sqlite-utils (which records them in
`_sqlite_migrations`). Loads sqlite-utils (~0.25 s), so only the commands that migrate import it.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

from store import db as store_db
from store.db import write
from store.migrations import NAMES, STEPS
from store.schema_state import SET

MIGRATIONS = Migrations(SET)
for _step in STEPS:
    MIGRATIONS()(_step)

__all__ = ["MIGRATIONS", "latest", "migrate", "pending"]


def pending(db: store_db.Database) -> list[str]:
    return [m.name for m in MIGRATIONS.pending(Database(db.conn))]


def latest() -> str:
    return NAMES[-1]


def migrate(db: store_db.Database) -> list[str]:
    """Apply pending migrations in one write transaction; returns the names this call applied.

    What is pending is read inside the transaction, under the write lock: another process
    migrating the same file first leaves this call nothing to apply, and it says so.
    """
    if not pending(db):  # the common case, without taking the write lock
        return []
    with write(db):
        todo = pending(db)
        if todo:
            MIGRATIONS.apply(Database(db.conn))
    return todo
