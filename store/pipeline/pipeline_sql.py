"""Reads the pipeline stages need: work lists and what is already done (for resumability).

Every "todo" query returns only units without a successful row, so a re-run after a crash or a
partial failure picks up exactly what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.db import Database, loads


@dataclass(frozen=True, slots=True)
class ResponseToJudge:
    """An answered response of an active item, with its item's query and contract (the
    contract items decoded from their JSON)."""

    id: str
    item_id: str
    model: str
    variant: str
    text: str
    query: str
    required: list[dict[str, Any]]
    forbidden: list[dict[str, Any]]


def _rows(db: Database, sql: str, params: tuple = (), json_cols: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for r in db.execute(sql, params):
        d = dict(r)
        for c in json_cols:
            if c in d and d[c] is not None:
                d[c] = loads(d[c])
        out.append(d)
    return out


def worlds(db: Database, ids: list[str] | None) -> list[dict[str, Any]]:
    if ids:
        marks = ",".join("?" * len(ids))
        return _rows(db, f"SELECT * FROM worlds WHERE id IN ({marks}) ORDER BY id", tuple(ids))
    return _rows(db, "SELECT * FROM worlds ORDER BY id")


def policies(db: Database, world_id: str) -> list[dict[str, Any]]:
    return _rows(db, "SELECT id, kind, text FROM policies WHERE world_id = ? ORDER BY position",
                 (world_id,))


def clauses(db: Database, world_id: str) -> list[dict[str, Any]]:
    return _rows(db, "SELECT * FROM clauses WHERE world_id = ? ORDER BY id", (world_id,),
                 ("policy_ids",))


def clauses_by_id(db: Database, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = _rows(db, f"SELECT * FROM clauses WHERE id IN ({marks})", tuple(ids), ("policy_ids",))
    order = {cid: i for i, cid in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r["id"]])


def grounded_policy_ids(db: Database, world_id: str) -> set[str]:
    out: set[str] = set()
    for row in db.execute("SELECT policy_ids FROM clauses WHERE world_id = ?", (world_id,)):
        out.update(loads(row[0]))  # type: ignore[arg-type]
    return out


def composition_ids(db: Database, world_id: str) -> set[str]:
    return {r[0] for r in db.execute("SELECT id FROM compositions WHERE world_id = ? AND "
                                     "status != 'failed'", (world_id,))}


def compositions(db: Database, world_id: str, status: str = "confirmed") -> list[dict[str, Any]]:
    return _rows(db, "SELECT * FROM compositions WHERE world_id = ? AND status = ? ORDER BY id",
                 (world_id, status), ("clause_ids",))


def item_ids_with_prefix(db: Database, prefix: str) -> set[str]:
    return {r[0] for r in db.execute("SELECT id FROM items WHERE substr(id, 1, ?) = ?",
                                     (len(prefix), prefix))}


def items(db: Database, world_id: str, *, method: str | None = None,
          selected: bool | None = None, parent: bool | None = None) -> list[dict[str, Any]]:
    sql = "SELECT * FROM items WHERE world_id = ?"
    params: list[Any] = [world_id]
    if method is not None:
        sql += " AND method = ?"
        params.append(method)
    if selected is not None:
        sql += " AND selected = ?"
        params.append(int(selected))
    if parent is not None:
        sql += " AND parent_item_id IS " + ("NOT NULL" if parent else "NULL")
    return _rows(db, sql + " ORDER BY id", tuple(params), ("required", "forbidden", "screening"))


def active_items(db: Database, world_id: str) -> list[dict[str, Any]]:
    """Items that get answered: selected items and the projections of selected items, except
    projections the projection screening rejected (`screening.passed` false)."""
    return _rows(
        db,
        "SELECT i.* FROM items i LEFT JOIN items p ON p.id = i.parent_item_id "
        # CASE, not AND: SQLite may evaluate json_extract on text json_valid rejected.
        "WHERE i.world_id = ? AND (i.selected = 1 OR (p.selected = 1 AND (CASE WHEN "
        "json_valid(i.screening) THEN json_extract(i.screening, '$.passed') END) IS NOT 0)) "
        "ORDER BY i.id",
        (world_id,), ("required", "forbidden"),
    )


def response_ok(db: Database, item_id: str, model: str, variant: str) -> bool:
    row = db.execute("SELECT failure FROM responses WHERE item_id = ? AND model = ? AND "
                     "variant = ?", (item_id, model, variant)).fetchone()
    return row is not None and row[0] is None


def responses_for_items(db: Database, world_id: str) -> list[ResponseToJudge]:
    """Answered responses of the world's active items, with their item's query and contract."""
    rows = _rows(
        db,
        "SELECT r.id, r.item_id, r.model, r.variant, r.text, i.query, i.required, i.forbidden "
        "FROM responses r JOIN items i ON i.id = r.item_id "
        "LEFT JOIN items p ON p.id = i.parent_item_id "
        "WHERE i.world_id = ? AND (i.selected = 1 OR p.selected = 1) AND r.failure IS NULL "
        "ORDER BY r.id",
        (world_id,), ("required", "forbidden"),
    )
    return [ResponseToJudge(**r) for r in rows]


def judgment_ok(db: Database, response_id: str, judge: str, mode: str) -> bool:
    row = db.execute("SELECT failure FROM judgments WHERE response_id = ? AND judge = ? AND "
                     "mode = ?", (response_id, judge, mode)).fetchone()
    return row is not None and row[0] is None


def delete_failed_response(db: Database, item_id: str, model: str, variant: str) -> None:
    db.execute("DELETE FROM responses WHERE item_id = ? AND model = ? AND variant = ? AND "
               "failure IS NOT NULL", (item_id, model, variant))


def delete_failed_judgment(db: Database, response_id: str, judge: str, mode: str) -> None:
    db.execute("DELETE FROM judgments WHERE response_id = ? AND judge = ? AND mode = ? AND "
               "failure IS NOT NULL", (response_id, judge, mode))


def set_selected(db: Database, world_id: str, method: str, selected_ids: list[str]) -> None:
    # Only pipeline-made items (run_id set): imported, hand-made suites keep their flags.
    db.execute("UPDATE items SET selected = 0 WHERE world_id = ? AND method = ? AND "
               "parent_item_id IS NULL AND run_id IS NOT NULL", (world_id, method))
    for iid in selected_ids:
        db.execute("UPDATE items SET selected = 1 WHERE id = ?", (iid,))


def set_screening(db: Database, item_id: str, screening: str) -> None:
    db.execute("UPDATE items SET screening = ? WHERE id = ?", (screening, item_id))


def set_mapping(db: Database, item_id: str, pattern: str | None, facet: str | None) -> None:
    """Post-hoc pattern x facet of an ablation item (for reporting only)."""
    db.execute("UPDATE items SET pattern = ?, facet = ? WHERE id = ?", (pattern, facet, item_id))
