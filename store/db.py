"""Connections and transactions.

One connection per thread (sqlite3's default `check_same_thread` enforces it). Every connection
runs in WAL mode with foreign keys on, `synchronous=FULL` (a committed label survives a power cut)
and a 30 s busy timeout. Writes go through `write()`, which opens `BEGIN IMMEDIATE`: a deferred
BEGIN that later tries to write cannot upgrade its lock under WAL and fails with "database is
locked" no matter the busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

BUSY_TIMEOUT_MS = 30_000


class StoreError(Exception):
    """A problem with the database that the user can act on (shown as one line)."""


def utcnow() -> str:
    """ISO 8601 UTC timestamp with microseconds and a Z, sortable as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def connect(path: str | os.PathLike[str], *, create: bool = False) -> Database:
    """Open the database at `path` with copal's pragmas.

    Refuses to create a new file unless `create` is set, so a mistyped `--db` is an error rather
    than a silently empty database.
    """
    p = Path(path)
    if str(path) != ":memory:" and not p.exists():
        if not create:
            raise StoreError(f"no database at {p} (run `copal init` first)")
        p.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=True
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(path) != ":memory:" and mode.lower() != "wal":
        raise StoreError(f"could not switch {p} to WAL mode (got {mode})")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    return Database(conn)


@contextmanager
def write(db: Database) -> Iterator[Database]:
    """A write transaction that takes the write lock up front (`BEGIN IMMEDIATE`).

    Nested use becomes a savepoint, so helpers can call each other freely.
    """
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def scalar(db: Database, sql: str, params: tuple | list | dict = ()) -> object:
    row = db.execute(sql, params).fetchone()
    return None if row is None else row[0]


def dumps(value: object) -> str:
    """Canonical JSON for stored list/dict columns (stable bytes for exports and hashes)."""
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def loads(text: str | None) -> object:
    import json

    return None if text is None else json.loads(text)
