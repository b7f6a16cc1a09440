"""A database that fails under the running app: which errors mean the file itself is damaged or
out of reach, and the one-line error each becomes.

The command line checks the database before the terminal is taken over (`store.db.connect`);
damage further in (a corrupt page of one table, a file removed, a disk that fails or fills) only
shows once a screen reads or writes there, inside Textual, which would print a traceback with
every local variable (SQL text, response ids) and exit 1. The app (`CopalApp`) hands every
unhandled exception to `database_failure` first: a `StoreError` comes back for these, the app
ends, and `CopalApp.run` raises it for the command line to print as its own one-line error
(`StoreRefused`: exit 2), the line `copal` prints when it finds the damage before the app
starts. Anything else is a bug and keeps Textual's traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store.db import StoreError, StoreRefused

# SQLite's primary result codes that say the file, not the statement, is at fault.
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_UNREACHABLE = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM,
                          sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY})
# How deep to follow `__cause__`/`__context__` and a worker's wrapped error.
_DEPTH = 8


def database_failure(error: BaseException, path: Path) -> StoreError | None:
    """The one-line error `error` is when it comes from the database file (damaged,
    unreadable, unwritable, gone), else None. Follows a thread worker's wrapped error and the
    exception's causes."""
    seen: BaseException | None = error
    for _ in range(_DEPTH):
        if seen is None:
            return None
        if isinstance(seen, StoreError):
            return seen
        if isinstance(seen, sqlite3.DatabaseError):
            found = _from_sqlite(seen, path)
            if found is not None:
                return found
        # textual.worker.WorkerFailed keeps the worker's exception as `error`.
        inner = getattr(seen, "error", None)
        seen = inner if isinstance(inner, BaseException) else (seen.__cause__ or
                                                                  seen.__context__)
    return None


def _from_sqlite(exc: sqlite3.DatabaseError, path: Path) -> StoreError | None:
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF  # extended codes keep it in 8 bits
    if primary in _DAMAGED:
        # The wording `copal` uses when it finds the damage as it opens the file.
        return StoreRefused(f"cannot read {path} as a SQLite database: {exc}")
    if primary in _UNREACHABLE:
        return StoreRefused(f"cannot use the database {path}: {exc}")
    return None
