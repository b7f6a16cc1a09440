"""SQL behind the JSONL interchange of COMPASS suites: single rows by id for the importer's
"identical or error" check, and the export iteration (usable rows only, fixed order).

Inserts reuse `store.artifacts.compass`. Callers open the transaction with `store.db.write`.
"""

from __future__ import annotations

from collections.abc import Iterator

from store.artifacts.records import CompassJudgmentRow, CompassQueryRow, CompassResponseRow
from store.db import Database

# Failed calls (no text, no verdict) are pipeline state, not results: never exported.
USABLE_RESPONSE = "failure IS NULL AND text IS NOT NULL"
USABLE_JUDGMENT = "failure IS NULL AND aligned IS NOT NULL"


def query(db: Database, query_id: str) -> CompassQueryRow | None:
    row = db.execute("SELECT * FROM compass_queries WHERE id = ?", (query_id,)).fetchone()
    return None if row is None else CompassQueryRow.from_row(row)


def response(db: Database, response_id: str) -> CompassResponseRow | None:
    row = db.execute("SELECT * FROM compass_responses WHERE id = ?", (response_id,)).fetchone()
    return None if row is None else CompassResponseRow.from_row(row)


def response_for(db: Database, query_id: str, model: str,
                 variant: str) -> CompassResponseRow | None:
    """The row holding the (query, model, variant) slot, usable or failed."""
    row = db.execute("SELECT * FROM compass_responses WHERE query_id = ? AND model = ? "
                     "AND variant = ?", (query_id, model, variant)).fetchone()
    return None if row is None else CompassResponseRow.from_row(row)


def judgment(db: Database, judgment_id: str) -> CompassJudgmentRow | None:
    row = db.execute("SELECT * FROM compass_judgments WHERE id = ?", (judgment_id,)).fetchone()
    return None if row is None else CompassJudgmentRow.from_row(row)


def judgment_for(db: Database, response_id: str, judge: str) -> CompassJudgmentRow | None:
    row = db.execute("SELECT * FROM compass_judgments WHERE response_id = ? AND judge = ?",
                     (response_id, judge)).fetchone()
    return None if row is None else CompassJudgmentRow.from_row(row)


def response_query_type(db: Database, response_id: str) -> str | None:
    row = db.execute("SELECT q.query_type FROM compass_responses r JOIN compass_queries q "
                     "ON q.id = r.query_id WHERE r.id = ?", (response_id,)).fetchone()
    return None if row is None else str(row[0])


def iter_queries(db: Database) -> Iterator[CompassQueryRow]:
    # Base queries before the edge queries derived from them, so a re-import resolves
    # parent_id in one pass; by id within each.
    for where in ("parent_id IS NULL", "parent_id IS NOT NULL"):
        for r in db.execute(f"SELECT * FROM compass_queries WHERE {where} ORDER BY id"):
            yield CompassQueryRow.from_row(r)


def iter_responses(db: Database) -> Iterator[CompassResponseRow]:
    for r in db.execute(f"SELECT * FROM compass_responses WHERE {USABLE_RESPONSE} ORDER BY id"):
        yield CompassResponseRow.from_row(r)


def iter_judgments(db: Database) -> Iterator[CompassJudgmentRow]:
    for r in db.execute(f"SELECT * FROM compass_judgments WHERE {USABLE_JUDGMENT} ORDER BY id"):
        yield CompassJudgmentRow.from_row(r)
