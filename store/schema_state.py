"""Which migrations a database has, read without sqlite-utils (start-up path of every command).

`NAMES` lists the migrations registered in `store.migrations`, in order; a test keeps the two
equal. sqlite-utils records applied migrations in `_sqlite_migrations` (set, name, applied_at).
"""

from __future__ import annotations

from store.db import Database, StoreError

SET = "copal"
NAMES = ("m001_initial", "m002_item_gate_route", "m003_label_queue", "m005_compass",
         "m006_dialogues")


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
