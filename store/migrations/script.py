"""Running a migration's SQL script inside the surrounding transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database


def run_script(db: Database, script: str) -> None:
    # executescript() would COMMIT the surrounding transaction; run statement by statement so
    # the migration and its bookkeeping row stay atomic.
    for stmt in _split(script):
        db.execute(stmt)


def _split(script: str) -> list[str]:
    import sqlite3

    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--") and not buf.strip():
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
