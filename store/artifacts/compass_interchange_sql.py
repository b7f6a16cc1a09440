"""SQL behind the JSONL interchange of COMPASS suites: single rows by id for the importer's
"identical or error" check, and the export iteration (usable rows only, fixed order).

Inserts reuse `store.artifacts.compass_sql`. Callers open the transaction with `store.db.write`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from store.db import Database, loads

# Failed calls (no text, no verdict) are pipeline state, not results: never exported.
USABLE_RESPONSE = "failure IS NULL AND text IS NOT NULL"
USABLE_JUDGMENT = "failure IS NULL AND aligned IS NOT NULL"


def _one(db: Database, sql: str, params: tuple[Any, ...]) -> dict[str, Any] | None:
    row = db.execute(sql, params).fetchone()
    return None if row is None else dict(row)


def query(db: Database, query_id: str) -> dict[str, Any] | None:
    row = _one(db, "SELECT * FROM compass_queries WHERE id = ?", (query_id,))
    if row is not None:
        row["attributes"], row["matched"] = loads(row["attributes"]), loads(row["matched"])
    return row


def response(db: Database, response_id: str) -> dict[str, Any] | None:
    return _one(db, "SELECT * FROM compass_responses WHERE id = ?", (response_id,))


def response_for(db: Database, query_id: str, model: str, variant: str) -> dict[str, Any] | None:
    """The row holding the (query, model, variant) slot, usable or failed."""
    return _one(db, "SELECT * FROM compass_responses WHERE query_id = ? AND model = ? "
                    "AND variant = ?", (query_id, model, variant))


def judgment(db: Database, judgment_id: str) -> dict[str, Any] | None:
    return _one(db, "SELECT * FROM compass_judgments WHERE id = ?", (judgment_id,))


def judgment_for(db: Database, response_id: str, judge: str) -> dict[str, Any] | None:
    return _one(db, "SELECT * FROM compass_judgments WHERE response_id = ? AND judge = ?",
                (response_id, judge))


def response_query_type(db: Database, response_id: str) -> str | None:
    row = db.execute("SELECT q.query_type FROM compass_responses r JOIN compass_queries q "
                     "ON q.id = r.query_id WHERE r.id = ?", (response_id,)).fetchone()
    return None if row is None else str(row[0])


def iter_queries(db: Database) -> Iterator[dict[str, Any]]:
    # Base queries before the edge queries derived from them, so a re-import resolves
    # parent_id in one pass; by id within each.
    for where in ("parent_id IS NULL", "parent_id IS NOT NULL"):
        for r in db.execute(f"SELECT * FROM compass_queries WHERE {where} ORDER BY id"):
            d = dict(r)
            d["attributes"], d["matched"] = loads(d["attributes"]), loads(d["matched"])
            yield d


def iter_responses(db: Database) -> Iterator[dict[str, Any]]:
    for r in db.execute(f"SELECT * FROM compass_responses WHERE {USABLE_RESPONSE} ORDER BY id"):
        yield dict(r)


def iter_judgments(db: Database) -> Iterator[dict[str, Any]]:
    for r in db.execute(f"SELECT * FROM compass_judgments WHERE {USABLE_JUDGMENT} ORDER BY id"):
        yield dict(r)
