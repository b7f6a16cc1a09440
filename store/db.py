"""Connections and transactions.

One connection per thread (sqlite3's default `check_same_thread` enforces it). Every connection
runs in WAL mode with foreign keys on, `synchronous=FULL` (a committed label survives a power cut)
and a 30 s busy timeout. Writes go through `write()`, which opens `BEGIN IMMEDIATE`: a deferred
BEGIN that later tries to write cannot upgrade its lock under WAL and fails with "database is
locked" no matter the busy timeout.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_MS = 30_000


class Database:
    """One sqlite3 connection with copal's pragmas (`connect()` builds it).

    Deliberately thin: the store only ever needs `execute`, the raw `conn` and nested
    savepoints. Wrapping sqlite-utils' `Database` here cost every command (and the TUI's cold
    start) about 0.3 s of imports, numpy included, for features nothing used; sqlite-utils is
    still what runs the migrations (`store.migrations`).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction, or a savepoint inside one (so helpers can nest freely)."""
        conn = self.conn
        if not conn.in_transaction:
            conn.execute("BEGIN")
            try:
                yield self
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            return
        name = f"copal_{id(self):x}_{_savepoints.__next__()}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield self
        except BaseException:
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        else:
            conn.execute(f"RELEASE SAVEPOINT {name}")

    def close(self) -> None:
        self.conn.close()


_savepoints = itertools.count()


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
