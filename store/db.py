"""Connections and transactions.

One connection per thread (sqlite3's default `check_same_thread` enforces it). Every connection
runs in WAL mode with foreign keys on, `synchronous=FULL` (a committed label survives a power cut)
and a 30 s busy timeout. Writes go through `write()`, which opens `BEGIN IMMEDIATE`: a deferred
BEGIN that later tries to write cannot upgrade its lock under WAL and fails with "database is
locked" no matter the busy timeout.

`connect()` looks at a file before it writes anything to it (the WAL switch writes the header):
an empty file, a file that is not SQLite, a database of a newer copal or of something else is
refused (`StoreRefused`, checked by `store.schema_state.check_openable`), and a database whose
file or folder is not writable is opened read-only.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

# The errors live in store.errors (store.schema_state raises them too); re-exported here, where
# most callers meet them.
from store.errors import OverBudget as OverBudget
from store.errors import StoreError as StoreError
from store.errors import StoreRefused as StoreRefused
from store.schema_state import check_openable

BUSY_TIMEOUT_MS = 30_000
Access = Literal["auto", "write", "read"]


class Database:
    """One sqlite3 connection with copal's pragmas (`connect()` builds it).

    Deliberately thin: the store only ever needs `execute`, the raw `conn` and nested
    savepoints. Wrapping sqlite-utils' `Database` here cost every command (and the TUI's cold
    start) about 0.3 s of imports, numpy included, for features nothing used; sqlite-utils is
    still what runs the migrations (`store.migrations`).
    """

    def __init__(self, conn: sqlite3.Connection, *, readonly: bool = False) -> None:
        self.conn = conn
        self.readonly = readonly

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def tuples(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        """`execute` with rows as plain tuples, for reads of every row of a large table (an
        export's 300,000 judgments spent a third of their read building `sqlite3.Row`s)."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction, or a savepoint inside one (so helpers can nest freely)."""
        conn = self.conn
        if not conn.in_transaction:
            with _transaction(self, "BEGIN"):
                yield self
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

    @contextmanager
    def within(self, seconds: float) -> Iterator[Database]:
        """Reads that give up after `seconds` with `OverBudget`, for a UI thread that tries a
        cheap query inline and hands it to a worker otherwise. SQLite consults the clock every
        1,000 virtual-machine steps and interrupts the statement; a lock wait is cut to the
        same budget (the connection's 30 s busy timeout is put back afterwards)."""
        deadline = time.perf_counter() + seconds
        conn = self.conn
        conn.set_progress_handler(lambda: time.perf_counter() > deadline, 1000)
        conn.execute(f"PRAGMA busy_timeout = {max(1, int(seconds * 1000))}")
        try:
            yield self
        except sqlite3.OperationalError as exc:
            if time.perf_counter() > deadline:
                raise OverBudget(f"not done within {seconds:g} s: {exc}") from exc
            raise
        finally:
            conn.set_progress_handler(None, 0)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def close(self) -> None:
        self.conn.close()


_savepoints = itertools.count()


def utcnow() -> str:
    """ISO 8601 UTC timestamp with microseconds and a Z, sortable as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def connect(path: str | os.PathLike[str], *, create: bool = False,
            access: Access = "auto") -> Database:
    """Open the database at `path` with copal's pragmas.

    Refuses to create a new file unless `create` is set, so a mistyped `--db` is an error rather
    than a silently empty database; `create` (`copal init`) may also initialise an empty file
    or an SQLite file without tables. Everything else is checked before the first write.
    `access`: "auto" opens read-only when the file or its folder is not writable, "write"
    refuses such a database, "read" always opens read-only.
    """
    if str(path) == ":memory:":
        return Database(_configure(sqlite3.connect(
            ":memory:", timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=True)))
    p = Path(path)
    if not p.exists():
        if not create:
            raise StoreError(f"no database at {p} (run `copal init` first)")
        p.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(p.parent, os.W_OK):
            raise StoreRefused(f"cannot create {p}: its folder is read-only")
    else:
        _check_file(p, create=create)
    writable = _writable(p) if p.exists() else True
    if access == "write" and not writable:
        raise StoreRefused(f"{p} is read-only (the file or its folder is not writable); "
                           "this command writes to the database")
    if access == "read" or not writable:
        return Database(_configure(_open_readonly(p), readonly=True), readonly=True)
    conn = sqlite3.connect(
        str(p), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=True
    )
    conn = _configure(conn)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":
        raise StoreError(f"could not switch {p} to WAL mode (got {mode})")
    return Database(conn)


def _configure(conn: sqlite3.Connection, *, readonly: bool = False) -> sqlite3.Connection:
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if readonly:  # journal and sync pragmas only matter to a connection that writes
        return conn
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def _check_file(p: Path, *, create: bool) -> None:
    """Refuse `p` unless it is a copal database this copal knows (or, with `create`, an empty
    file or table-less SQLite file), reading it without writing a byte."""
    # Never open the file with Python's own open(): closing any descriptor of a file drops
    # every POSIX lock this process holds on it, including those of a live SQLite connection
    # (another thread's, or the label queue's), and another process may then checkpoint the
    # WAL under it. SQLite's own file layer keeps such descriptors open; so the file is only
    # stat()ed here, and read through SQLite.
    if p.is_dir() or not os.access(p, os.R_OK):
        raise StoreRefused(f"cannot read {p}: " + ("it is a folder" if p.is_dir()
                                                   else "permission denied"))
    if p.stat().st_size == 0:
        if create:
            return
        raise StoreRefused(f"{p} is empty, not a copal database; "
                           "run `copal init` to create one")
    conn = _open_readonly(p)
    try:
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:  # SQLITE_NOTADB: the header is not SQLite's
            if "not a database" in str(exc):
                raise StoreRefused(f"{p} is not a SQLite database") from None
            raise
        check_openable(Database(conn, readonly=True), p, create=create)
    except sqlite3.DatabaseError as exc:  # a damaged file, or one we cannot read read-only
        raise StoreRefused(f"cannot read {p} as a SQLite database: {exc}") from None
    finally:
        conn.close()


def _writable(p: Path) -> bool:
    # SQLite writes beside the database (the -wal and -shm files, or a rollback journal), so a
    # writable file in a read-only folder is as read-only as a read-only file.
    sidecars = [_sidecar(p, s) for s in ("-wal", "-shm")]
    return os.access(p, os.W_OK) and os.access(p.parent, os.W_OK) and all(
        os.access(s, os.W_OK) for s in sidecars if s.exists())


def _sidecar(p: Path, suffix: str) -> Path:
    return p.with_name(p.name + suffix)


def _open_readonly(p: Path) -> sqlite3.Connection:
    """A connection that cannot write to `p` (sqlite3 URI `mode=ro` or `immutable=1`).

    `mode=ro` reads a WAL database through its -shm file and creates -shm and -wal when they
    are missing: impossible in a read-only folder, and two stray files (read-only like the
    database, so they later break a writer) after a mere check or a browse. So when nobody has
    the database open (no -shm) and the main file holds all of it (no -wal content),
    `immutable=1` reads it creating and locking nothing. Where a -shm exists a connection may
    be live: `mode=ro` shares its -shm, takes its read locks and sees its commits (an immutable
    read could meet a checkpoint half-written). Decided from stat() alone, never by opening the
    file outside SQLite (see `_check_file`).
    """
    wal, shm = _sidecar(p, "-wal"), _sidecar(p, "-shm")
    quiet = not shm.exists() and not (wal.exists() and wal.stat().st_size > 0)
    param = "immutable=1" if quiet else "mode=ro"
    return sqlite3.connect(f"{p.resolve().as_uri()}?{param}", uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=True)


@contextmanager
def _transaction(db: Database, begin: str) -> Iterator[Database]:
    """`begin`, then COMMIT; ROLLBACK on any exception (unless SQLite already rolled back)."""
    conn = db.conn
    conn.execute(begin)
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextmanager
def write(db: Database, *, durable: bool = True) -> Iterator[Database]:
    """A write transaction that takes the write lock up front (`BEGIN IMMEDIATE`).

    Nested use becomes a savepoint, so helpers can call each other freely (and is as durable as
    the outer transaction). `durable=False` commits without waiting for the disk
    (`synchronous=NORMAL` for this one transaction): for what is worth nothing after a power
    cut, such as a lease, which expires anyway. The commit is still atomic, and the next durable
    commit syncs the log with it in order, so nothing written later can survive without it.
    """
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    if not durable:
        conn.execute("PRAGMA synchronous = NORMAL")
    try:
        with _transaction(db, "BEGIN IMMEDIATE"):
            yield db
    finally:
        if not durable:
            conn.execute("PRAGMA synchronous = FULL")


def scalar(db: Database, sql: str, params: tuple | list | dict = ()) -> object:
    row = db.execute(sql, params).fetchone()
    return None if row is None else row[0]


# One encoder for every call: json.dumps with options builds a new encoder per call, which cost
# an import of 300k judgments seconds. The bytes are those of json.dumps with the same options.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps(value: object) -> str:
    """Canonical JSON for stored list/dict columns (stable bytes for exports and hashes)."""
    return _CANONICAL.encode(value)


def loads(text: str | None) -> object:
    return None if text is None else json.loads(text)
