"""Plain-sqlite helpers the tests share: reading a store's rows back and copying a store file."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any


def query_rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(sql, params).fetchall()


def query_dicts(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    return [dict(r) for r in query_rows(db, sql, params)]


def copy_db(src: Path, dst: Path) -> Path:
    # The online backup API gives a consistent copy whatever state the WAL is in.
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)
    return dst
