"""Typed reads: lookups used by import validation, rows for export, counts for `stats`.

Exports iterate in primary-key order so the same database always gives the same bytes. Nothing
here begins a transaction: the caller (a service, an importer, the export) decides what is read
in one snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from store.annotation import annotations as log
from store.db import Database, loads, scalar


def _row(db: Database, sql: str, params: tuple = ()) -> dict[str, Any] | None:
    row = db.execute(sql, params).fetchone()
    return None if row is None else dict(row)


def world(db: Database, world_id: str) -> dict[str, Any] | None:
    return _row(db, "SELECT * FROM worlds WHERE id = ?", (world_id,))


def world_ids(db: Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM worlds ORDER BY id")]


def policies(db: Database, world_id: str) -> list[dict[str, Any]]:
    return [
        dict(r)
        for r in db.execute(
            "SELECT id, world_id, kind, text FROM policies WHERE world_id = ? ORDER BY position",
            (world_id,),
        )
    ]


def policy(db: Database, world_id: str, policy_id: str) -> dict[str, Any] | None:
    return _row(
        db,
        "SELECT id, world_id, kind, text FROM policies WHERE world_id = ? AND id = ?",
        (world_id, policy_id),
    )


def _decode(row: dict[str, Any], *json_cols: str) -> dict[str, Any]:
    for col in json_cols:
        if col in row:
            row[col] = loads(row[col])
    return row


def clause(db: Database, clause_id: str) -> dict[str, Any] | None:
    row = _row(db, "SELECT * FROM clauses WHERE id = ?", (clause_id,))
    return None if row is None else _decode(row, "policy_ids")


def composition(db: Database, composition_id: str) -> dict[str, Any] | None:
    row = _row(db, "SELECT * FROM compositions WHERE id = ?", (composition_id,))
    return None if row is None else _decode(row, "clause_ids")


def item(db: Database, item_id: str) -> dict[str, Any] | None:
    row = _row(db, "SELECT * FROM items WHERE id = ?", (item_id,))
    return None if row is None else _decode(row, "required", "forbidden", "screening")


def response(db: Database, response_id: str) -> dict[str, Any] | None:
    return _row(db, "SELECT * FROM responses WHERE id = ?", (response_id,))


def judgment(db: Database, judgment_id: str) -> dict[str, Any] | None:
    row = _row(db, "SELECT * FROM judgments WHERE id = ?", (judgment_id,))
    return None if row is None else _decode(row, "observed", "evidence")


def response_content(db: Database, response_id: str) -> dict[str, Any] | None:
    """What a label is given on: the item's query and contract and the response text."""
    row = _row(
        db,
        "SELECT r.id AS response_id, r.text AS response, i.id AS item_id, i.query, "
        "i.required, i.forbidden FROM responses r JOIN items i ON i.id = r.item_id "
        "WHERE r.id = ?",
        (response_id,),
    )
    return None if row is None else _decode(row, "required", "forbidden")


# ------------------------------------------------------------------ export iteration


def iter_table(db: Database, table: str, where: str = "", params: tuple = ()) -> Iterator[dict]:
    order = {"policies": "world_id, position"}
    sql = f"SELECT * FROM {table} {where} ORDER BY {order.get(table, 'id')}"
    for r in db.execute(sql, params):
        yield dict(r)


# ------------------------------------------------------------------ counts


def stats(db: Database) -> dict[str, int]:
    def count(sql: str) -> int:
        return int(scalar(db, sql) or 0)  # type: ignore[call-overload]

    return {
        "worlds": count("SELECT COUNT(*) FROM worlds"),
        "policies": count("SELECT COUNT(*) FROM policies"),
        "clauses": count("SELECT COUNT(*) FROM clauses"),
        "compositions": count("SELECT COUNT(*) FROM compositions"),
        "items": count("SELECT COUNT(*) FROM items"),
        "selected_items": count("SELECT COUNT(*) FROM items WHERE selected = 1"),
        "responses": count("SELECT COUNT(*) FROM responses"),
        "judgments": count("SELECT COUNT(*) FROM judgments"),
        # COPAL's label events and current labels and decisions (the other suites' labels
        # are counted by the report's sections).
        "label_events": log.count(db, "copal", log.ANNOTATOR),
        "labels": log.count_current(db, "copal"),
        "adjudications": log.count_current(db, "copal", log.ADJUDICATOR),
        "runs": count("SELECT COUNT(*) FROM runs"),
        "llm_calls": count("SELECT COUNT(*) FROM llm_calls"),
    }


def error_summary(db: Database, judge: str, mode: str, method: str = "copal") -> list[dict]:
    """Per target model: judged selected items of `method` and how many erred (demo summary)."""
    rows = db.execute(
        "SELECT r.model AS model, COUNT(*) AS n, SUM(j.error) AS errors "
        "FROM judgments j JOIN responses r ON r.id = j.response_id "
        "JOIN items i ON i.id = r.item_id "
        "WHERE j.judge = ? AND j.mode = ? AND j.error IS NOT NULL AND i.selected = 1 "
        "AND i.method = ? GROUP BY r.model ORDER BY r.model",
        (judge, mode, method),
    )
    return [dict(r) for r in rows]


def pas_summary(db: Database, judge: str) -> list[dict]:
    """Per target model, variant and allowed/denied: judged COMPASS responses and how many are
    aligned (demo summary; the report has the full breakdown with intervals)."""
    rows = db.execute(
        "SELECT r.model AS model, r.variant AS variant, "
        "CASE WHEN q.query_type LIKE 'allowed%' THEN 'allowed' ELSE 'denied' END AS kind, "
        "COUNT(*) AS n, SUM(j.aligned) AS aligned "
        "FROM compass_judgments j JOIN compass_responses r ON r.id = j.response_id "
        "JOIN compass_queries q ON q.id = r.query_id "
        "WHERE j.judge = ? AND j.aligned IS NOT NULL AND j.failure IS NULL "
        "GROUP BY r.model, r.variant, kind ORDER BY r.model, r.variant, kind",
        (judge,),
    )
    return [dict(r) for r in rows]


# ------------------------------------------------------------------ bulk lookups (imports)
# An import checks hundreds of thousands of records: one query per chunk of ids, not per record.

_CHUNK = 20_000


def _by_ids(db: Database, sql: str, ids: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Rows of `sql`, whose one parameter is a JSON array of ids, over `ids` in chunks."""
    todo = list(ids)
    for i in range(0, len(todo), _CHUNK):
        for r in db.execute(sql, (json.dumps(todo[i:i + _CHUNK]),)):
            yield dict(r)


_IDS = "IN (SELECT value FROM json_each(?))"


def max_rowid(db: Database, table: str) -> int:
    """The largest rowid of `table` (0 when empty): rows above it were written since."""
    return int(db.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()[0])


# The stored rows among `ids`, by id, each with its `_rowid` (an importer tells rows it wrote
# itself, above the rowid it began at, from rows stored before).

def items_by_id(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The stored items among `ids` (as `item` gives them, with `_rowid`), by id."""
    return {r["id"]: _decode(r, "required", "forbidden", "screening")
            for r in _by_ids(db, f"SELECT rowid AS _rowid, * FROM items WHERE id {_IDS}", ids)}


def responses_by_id(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _by_ids(
        db, f"SELECT rowid AS _rowid, * FROM responses WHERE id {_IDS}", ids)}


def judgments_by_id(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    return {r["id"]: _decode(r, "observed", "evidence") for r in _by_ids(
        db, f"SELECT rowid AS _rowid, * FROM judgments WHERE id {_IDS}", ids)}


def item_worlds(db: Database, ids: Iterable[str]) -> dict[str, str]:
    """The world of each stored item among `ids`."""
    return {r["id"]: r["world_id"] for r in _by_ids(
        db, f"SELECT id, world_id FROM items WHERE id {_IDS}", ids)}


def item_contracts(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """World, query and contract of each stored item among `ids`."""
    return {r["id"]: _decode(r, "required", "forbidden") for r in _by_ids(
        db, f"SELECT id, world_id, query, required, forbidden FROM items WHERE id {_IDS}", ids)}


def response_items(db: Database, ids: Iterable[str]) -> dict[str, str]:
    """The item of each stored response among `ids`."""
    return {r["id"]: r["item_id"] for r in _by_ids(
        db, f"SELECT id, item_id FROM responses WHERE id {_IDS}", ids)}


def annotated(db: Database, suite: str, subjects: Iterable[str]) -> set[str]:
    """The subjects among `subjects` with any event in the suite's annotation log."""
    return {r["subject"] for r in _by_ids(
        db, f"SELECT DISTINCT subject FROM annotations WHERE suite = '{_suite(suite)}' "
            f"AND subject {_IDS}", subjects)}


def _suite(suite: str) -> str:
    if suite not in ("copal", "compass", "dialogues"):
        raise ValueError(f"unknown suite {suite!r}")
    return suite


def response_contents(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """`response_content` of each stored response among `ids`, by response id."""
    sql = ("SELECT r.id AS response_id, r.text AS response, i.id AS item_id, i.query, "
           f"i.required, i.forbidden FROM responses r JOIN items i ON i.id = r.item_id "
           f"WHERE r.id {_IDS}")
    return {r["response_id"]: _decode(r, "required", "forbidden") for r in _by_ids(db, sql, ids)}
