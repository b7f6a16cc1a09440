"""Typed inserts for every stored artifact. Callers open the transaction with `store.db.write`.

Functions take plain values (already validated by the domain layer) and return nothing; ids are
chosen by the caller so stages stay idempotent (the same input always maps to the same id).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from store.db import Database, dumps, utcnow


def insert_world(db: Database, w: dict[str, Any], source_path: str | None = None) -> None:
    db.execute(
        "INSERT INTO worlds (id, name, industry, use_case, risk_tier, context, source_path, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (w["id"], w["name"], w["industry"], w["use_case"], w["risk_tier"], w["context"],
         source_path, utcnow()),
    )


def next_policy_position(db: Database, world_id: str) -> int:
    """The position after the world's last policy (1 for a world without policies)."""
    # No index covers (world_id, position): this scans the world's policies, so callers adding
    # many policies ask once and count on (a query per row made imports quadratic).
    return int(db.execute(
        "SELECT COALESCE(MAX(position), 0) + 1 FROM policies WHERE world_id = ?", (world_id,)
    ).fetchone()[0])


def insert_policy(db: Database, world_id: str, p: dict[str, Any],
                  position: int | None = None) -> None:
    """One policy, at `position` (default: after the world's last one)."""
    if position is None:
        position = next_policy_position(db, world_id)
    db.execute(
        "INSERT INTO policies (world_id, id, kind, text, position) VALUES (?, ?, ?, ?, ?)",
        (world_id, p["id"], p["kind"], p["text"], position),
    )


def insert_policies(db: Database, world_id: str, policies: Sequence[dict[str, Any]]) -> None:
    """A world's policies in order, after any it has: one position query, one executemany."""
    start = next_policy_position(db, world_id)
    db.conn.executemany(
        "INSERT INTO policies (world_id, id, kind, text, position) VALUES (?, ?, ?, ?, ?)",
        [(world_id, p["id"], p["kind"], p["text"], start + i) for i, p in enumerate(policies)],
    )


def insert_clause(db: Database, c: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO clauses (id, world_id, policy_ids, trigger, scope, effect, source_span, "
        "confidence, audit_note, run_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (c["id"], c["world_id"], dumps(list(c["policy_ids"])), c["trigger"], c["scope"],
         c.get("effect"), c["source_span"], c.get("confidence"), c.get("audit_note"), run_id,
         utcnow()),
    )


def insert_composition(db: Database, c: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO compositions (id, world_id, clause_ids, pattern, status, reason, run_id, "
        "created_at) VALUES (?,?,?,?,?,?,?,?)",
        (c["id"], c["world_id"], dumps(list(c["clause_ids"])), c["pattern"],
         c.get("status") or "confirmed", c.get("reason"), run_id, utcnow()),
    )


_ITEM_SQL = (
    "INSERT INTO items (id, world_id, composition_id, pattern, facet, query, required, "
    "forbidden, method, parent_item_id, selected, trap, screening, run_id, created_at, "
    "gate, route) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
_RESPONSE_SQL = (
    "INSERT INTO responses (id, item_id, model, variant, text, failure, run_id, created_at) "
    "VALUES (?,?,?,?,?,?,?,?)")
_JUDGMENT_SQL = (
    "INSERT INTO judgments (id, response_id, judge, mode, observed, error, direction, "
    "evidence, facet, rationale, failure, run_id, created_at) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")


def _item_row(it: dict[str, Any], run_id: str | None, created_at: str) -> tuple[Any, ...]:
    return (it["id"], it["world_id"], it.get("composition_id"), it.get("pattern"),
            it.get("facet"), it["query"], dumps(list(it["required"])),
            dumps(list(it["forbidden"])), it["method"], it.get("parent_item_id"),
            int(bool(it.get("selected"))), it.get("trap"),
            None if it.get("screening") is None else dumps(it["screening"]), run_id, created_at,
            it.get("gate"), it.get("route"))


def _response_row(r: dict[str, Any], run_id: str | None, created_at: str) -> tuple[Any, ...]:
    return (r["id"], r["item_id"], r["model"], r.get("variant") or "base", r.get("text"),
            r.get("failure"), run_id, created_at)


def _judgment_row(j: dict[str, Any], run_id: str | None, created_at: str) -> tuple[Any, ...]:
    observed = j.get("observed")
    return (j["id"], j["response_id"], j["judge"], j["mode"],
            None if observed is None else dumps(list(observed)), j.get("error"),
            j.get("direction"), None if j.get("evidence") is None else dumps(j["evidence"]),
            j.get("facet"), j.get("rationale"), j.get("failure"), run_id, created_at)


def insert_item(db: Database, it: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(_ITEM_SQL, _item_row(it, run_id, utcnow()))


def insert_response(db: Database, r: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(_RESPONSE_SQL, _response_row(r, run_id, utcnow()))


def insert_judgment(db: Database, j: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(_JUDGMENT_SQL, _judgment_row(j, run_id, utcnow()))


# ------------------------------------------------------------------ bulk (imports)
# One statement over many rows, in the order given (a projection after its parent), all with
# one timestamp: the rows of one import were written at one moment.


def insert_items(db: Database, rows: Iterable[dict[str, Any]], run_id: str | None = None) -> None:
    now = utcnow()
    db.conn.executemany(_ITEM_SQL, (_item_row(r, run_id, now) for r in rows))


def insert_responses(db: Database, rows: Iterable[dict[str, Any]],
                     run_id: str | None = None) -> None:
    now = utcnow()
    db.conn.executemany(_RESPONSE_SQL, (_response_row(r, run_id, now) for r in rows))


def insert_judgments(db: Database, rows: Iterable[dict[str, Any]],
                     run_id: str | None = None) -> None:
    now = utcnow()
    db.conn.executemany(_JUDGMENT_SQL, (_judgment_row(r, run_id, now) for r in rows))


# Imported judgments: no run, no failure; the caller encodes the JSON columns (canonically,
# with `dumps`) once per distinct value rather than once per row.
_JUDGMENT_IMPORT_SQL = (
    "INSERT INTO judgments (id, response_id, judge, mode, observed, error, direction, "
    "evidence, facet, rationale, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)")


def insert_judgment_rows(db: Database, rows: Iterable[tuple[Any, ...]]) -> None:
    """Judgments as tuples (id, response_id, judge, mode, observed JSON, error, direction,
    evidence JSON, facet, rationale, created_at)."""
    db.conn.executemany(_JUDGMENT_IMPORT_SQL, rows)


# A large import's page cache (KiB, as PRAGMA cache_size takes a negative size): the tables'
# b-trees being filled stay in memory instead of being re-read from the page cache of the OS.
BULK_CACHE_KIB = 256 * 1024


# A table receiving at least this many rows, and no fewer than it holds, has its secondary
# indexes dropped for the import and built once at the end (inside the same transaction, so a
# failed import gets them back with everything else): one sort per index instead of a b-tree
# insert per row and index.
BULK_INDEX_ROWS = 50_000


@contextmanager
def bulk_load(db: Database, incoming: Mapping[str, int]) -> Iterator[None]:
    """Inside an import's write transaction: settings for writing `incoming` rows per table,
    restored after. Durability is not touched (the commit is as safe as any other)."""
    before = int(db.execute("PRAGMA cache_size").fetchone()[0])
    if sum(incoming.values()) > 10_000:
        db.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    deferred: list[str] = []
    for table, n in incoming.items():
        if n >= BULK_INDEX_ROWS and n >= _rows(db, table):
            deferred += _drop_secondary_indexes(db, table)
    try:
        yield
        for sql in deferred:
            db.execute(sql)
    finally:
        db.execute(f"PRAGMA cache_size = {before}")


def _rows(db: Database, table: str) -> int:
    return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _drop_secondary_indexes(db: Database, table: str) -> list[str]:
    """Drop `table`'s own indexes (not those of its keys and UNIQUE constraints, which have no
    SQL); returns the statements that make them again."""
    found = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                       "AND tbl_name = ? AND sql IS NOT NULL ORDER BY name", (table,)).fetchall()
    for name, _ in found:
        db.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in found]
