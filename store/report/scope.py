"""What the report's reads share: the SQL that restricts a read to the worlds in scope, a
label's error, and fetching every row as a plain tuple (no sqlite3.Row per row)."""

from __future__ import annotations

from typing import Any

from store.db import Database

# A COPAL label's (or decision's) error, from its payload in the annotation log.
ERROR = "json_extract(e.payload, '$.error')"


def world_scope(worlds: list[str] | None, col: str) -> tuple[str, tuple[str, ...]]:
    """` AND <col> IN (?, ...)` and its parameters; nothing when every world is in scope."""
    if not worlds:
        return "", ()
    return f" AND {col} IN ({','.join('?' * len(worlds))})", tuple(worlds)


def all_rows(db: Database, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in db.execute(sql, params).fetchall()]
