"""Which migrations a database has, read without sqlite-utils (start-up path of every command).

`NAMES` are the migrations registered in `store.migrations`, in order (read from their step
functions; no sqlite-utils is loaded for that). sqlite-utils records applied migrations in `_sqlite_migrations` (set, name, applied_at).
Also decides which databases `store.db.connect` may open at all (`check_openable`).

A database written by a newer copal is recognised by a migration name missing from `NAMES`:
names are unique and append-only, and every copal records them, so no separate version marker
(`PRAGMA user_version`) is kept: it would be a second record of the same fact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from store.errors import StoreError, StoreRefused
from store.migrations import NAMES


class Database(Protocol):
    """What these checks need of a connection (`store.db.Database` has it); a protocol, since
    `store.db` calls these checks when it opens a file."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> sqlite3.Cursor: ...


SET = "copal"


def applied(db: Database) -> list[str]:
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
    ).fetchone()
    if not exists:
        return []
    rows = db.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid", (SET,)
    )
    return [r[0] for r in rows]


def pending_names(db: Database) -> list[str]:
    done = set(applied(db))
    return [n for n in NAMES if n not in done]


def require_current(db: Database) -> None:
    todo = pending_names(db)
    if todo:
        raise StoreError(
            f"database has {len(todo)} pending migration(s) ({', '.join(todo)}); "
            "run `copal migrate` first"
        )


def schema_version(db: Database) -> str | None:
    names = applied(db)
    return names[-1] if names else None


def check_openable(db: Database, path: Path, *, create: bool) -> None:
    """Refuse a database this copal must not touch (`db` is a read-only connection to it).

    Unknown migrations mean a newer copal wrote it: its tables may not mean what this copal
    thinks, and migrating or importing would mix two schemas. A SQLite file with tables but no
    copal migrations belongs to something else. One without any tables is only initialised by
    `create` (`copal init`), like an empty file.
    """
    names = applied(db)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise StoreRefused(f"{path} was written by a newer copal: unknown migration(s) "
                           f"{', '.join(unknown)}; upgrade copal")
    if names:
        return
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' AND name != '_sqlite_migrations' ORDER BY name")]
    if tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreRefused(f"{path} is a SQLite database but not a copal database "
                           f"(tables: {shown}); refusing to touch it")
    if not create:
        raise StoreRefused(f"{path} has no tables, not a copal database; "
                           "run `copal init` to create one")
