"""Reads the pipeline stages need: work lists and what is already done (for resumability).

Every "todo" query returns only units without a successful row, so a re-run after a crash or a
partial failure picks up exactly what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.db import Database, loads
from store.pipeline.rows import (
    ClauseRow,
    CompositionRow,
    ItemRow,
    PolicyRow,
    ResponseToJudge,
    WorldRow,
    columns,
    contract,
)

__all__ = ["ClauseRow", "CompositionRow", "ItemRow", "PolicyRow", "ResponseToJudge", "WorldRow"]

_WORLD = columns(WorldRow)
_CLAUSE = columns(ClauseRow)
_ITEM = columns(ItemRow)
_ITEM_I = columns(ItemRow, "i.")


def worlds(db: Database, ids: list[str] | None) -> list[WorldRow]:
    if ids:
        marks = ",".join("?" * len(ids))
        return [WorldRow.from_row(r) for r in db.execute(
            f"SELECT {_WORLD} FROM worlds WHERE id IN ({marks}) ORDER BY id", tuple(ids))]
    return [WorldRow.from_row(r) for r in db.execute(f"SELECT {_WORLD} FROM worlds ORDER BY id")]


def policies(db: Database, world_id: str) -> list[PolicyRow]:
    return [PolicyRow(*r) for r in db.execute(
        "SELECT id, kind, text FROM policies WHERE world_id = ? ORDER BY position", (world_id,))]


def clauses(db: Database, world_id: str) -> list[ClauseRow]:
    return [ClauseRow.from_row(r) for r in db.execute(
        f"SELECT {_CLAUSE} FROM clauses WHERE world_id = ? ORDER BY id", (world_id,))]


def clauses_by_id(db: Database, ids: Sequence[str]) -> list[ClauseRow]:
    """The clauses, in the order of `ids`."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = [ClauseRow.from_row(r) for r in db.execute(
        f"SELECT {_CLAUSE} FROM clauses WHERE id IN ({marks})", tuple(ids))]
    order = {cid: i for i, cid in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r.id])


def grounded_policy_ids(db: Database, world_id: str) -> set[str]:
    out: set[str] = set()
    for row in db.execute("SELECT policy_ids FROM clauses WHERE world_id = ?", (world_id,)):
        out.update(loads(row[0]))  # type: ignore[arg-type]
    return out


def composition_ids(db: Database, world_id: str) -> set[str]:
    return {r[0] for r in db.execute("SELECT id FROM compositions WHERE world_id = ? AND "
                                     "status != 'failed'", (world_id,))}


def compositions(db: Database, world_id: str, status: str = "confirmed") -> list[CompositionRow]:
    return [CompositionRow.from_row(r) for r in db.execute(
        f"SELECT {columns(CompositionRow)} FROM compositions WHERE world_id = ? AND status = ? "
        "ORDER BY id", (world_id, status))]


def item_ids_with_prefix(db: Database, prefix: str) -> set[str]:
    return {r[0] for r in db.execute("SELECT id FROM items WHERE substr(id, 1, ?) = ?",
                                     (len(prefix), prefix))}


def items(db: Database, world_id: str, *, method: str | None = None,
          selected: bool | None = None, parent: bool | None = None) -> list[ItemRow]:
    sql = f"SELECT {_ITEM} FROM items WHERE world_id = ?"
    params: list[str | int] = [world_id]
    if method is not None:
        sql += " AND method = ?"
        params.append(method)
    if selected is not None:
        sql += " AND selected = ?"
        params.append(int(selected))
    if parent is not None:
        sql += " AND parent_item_id IS " + ("NOT NULL" if parent else "NULL")
    return [ItemRow.from_row(r) for r in db.execute(sql + " ORDER BY id", tuple(params))]


def active_items(db: Database, world_id: str) -> list[ItemRow]:
    """Items that get answered: selected items and the projections of selected items, except
    projections the projection screening rejected (`screening.passed` false)."""
    return [ItemRow.from_row(r) for r in db.execute(
        f"SELECT {_ITEM_I} FROM items i LEFT JOIN items p ON p.id = i.parent_item_id "
        # CASE, not AND: SQLite may evaluate json_extract on text json_valid rejected.
        "WHERE i.world_id = ? AND (i.selected = 1 OR (p.selected = 1 AND (CASE WHEN "
        "json_valid(i.screening) THEN json_extract(i.screening, '$.passed') END) IS NOT 0)) "
        "ORDER BY i.id",
        (world_id,))]


def response_ok(db: Database, item_id: str, model: str, variant: str) -> bool:
    row = db.execute("SELECT failure FROM responses WHERE item_id = ? AND model = ? AND "
                     "variant = ?", (item_id, model, variant)).fetchone()
    return row is not None and row[0] is None


def responses_for_items(db: Database, world_id: str) -> list[ResponseToJudge]:
    """Answered responses of the world's active items, with their item's query and contract."""
    rows = db.execute(
        "SELECT r.id, r.item_id, r.model, r.variant, r.text, i.query, i.required, i.forbidden "
        "FROM responses r JOIN items i ON i.id = r.item_id "
        "LEFT JOIN items p ON p.id = i.parent_item_id "
        "WHERE i.world_id = ? AND (i.selected = 1 OR p.selected = 1) AND r.failure IS NULL "
        "ORDER BY r.id", (world_id,))
    return [ResponseToJudge(r[0], r[1], r[2], r[3], r[4], r[5], contract(r[6]), contract(r[7]))
            for r in rows]


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
