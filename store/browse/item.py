"""SQL for the item view: one item with its world, composition, active clauses, contract,
projections and responses, each response with every judgment, the annotators' current labels
and the current adjudication.

All reads are keyed lookups (item id, composition id, response ids) on existing indexes, so the
view costs the same on any size of database; responses are capped (`limit`) with a total.
The service (`copal_tui.services.browse.item_view`) reads them in one transaction.
"""

from __future__ import annotations

from store.annotation import annotations as log
from store.browse.rows import (
    ItemDetail,
    ItemJudgment,
    ItemResponse,
    MissingClause,
    ParentItem,
    Projection,
)
from store.db import Database, loads
from store.pipeline.rows import (
    ClauseRow,
    CompositionRow,
    ItemRow,
    columns,
    contract,
)

RESPONSE_LIMIT = 200
PROJECTION_LIMIT = 50


def item_view(db: Database, item_id: str) -> ItemDetail | None:
    """The item and everything around it except the responses (see `item_responses`)."""
    row = db.execute(
        f"SELECT {columns(ItemRow, 'i.')}, w.name AS world_name FROM items i "
        "JOIN worlds w ON w.id = i.world_id WHERE i.id = ?", (item_id,)
    ).fetchone()
    if row is None:
        return None
    item = ItemRow.from_row(row[:-1])
    comp = None
    if item.composition_id:
        crow = db.execute(f"SELECT {columns(CompositionRow)} FROM compositions WHERE id = ?",
                          (item.composition_id,)).fetchone()
        comp = None if crow is None else CompositionRow.from_row(crow)
    parent = None
    if item.parent_item_id:
        prow = db.execute("SELECT id, query, pattern, facet FROM items WHERE id = ?",
                          (item.parent_item_id,)).fetchone()
        parent = None if prow is None else ParentItem(*prow)
    projections = tuple(
        Projection(r["id"], r["query"], contract(r["required"]), contract(r["forbidden"]))
        for r in db.execute(
            "SELECT id, query, required, forbidden FROM items WHERE parent_item_id = ? "
            "ORDER BY rowid LIMIT ?", (item_id, PROJECTION_LIMIT)))
    total = int(db.execute(
        "SELECT COUNT(*) FROM responses WHERE item_id = ?", (item_id,)).fetchone()[0])
    return ItemDetail(item, row["world_name"], comp,
                      _clauses(db, _active_clause_ids(item, comp)), parent, projections, total)


def _active_clause_ids(item: ItemRow, comp: CompositionRow | None) -> list[str]:
    # A composed item activates its composition's clauses. A projection keeps one clause of
    # its parent's composition, so its active clauses are the ones its own contract cites.
    cited_ids = [c.clause_id for c in (*item.required, *item.forbidden) if c.clause_id]
    if item.parent_item_id or comp is None:
        kept = (item.screening or {}).get("kept_clause")
        return list(dict.fromkeys(([kept] if kept else []) + cited_ids))
    return list(dict.fromkeys([*comp.clause_ids, *cited_ids]))


def _clauses(db: Database, ids: list[str]) -> tuple[ClauseRow | MissingClause, ...]:
    out: list[ClauseRow | MissingClause] = []
    for cid in ids:
        row = db.execute(f"SELECT {columns(ClauseRow)} FROM clauses WHERE id = ?",
                         (cid,)).fetchone()
        out.append(MissingClause(cid) if row is None else ClauseRow.from_row(row))
    return tuple(out)


def item_judges(db: Database, item_id: str) -> list[tuple[str, str]]:
    """(judge, mode) pairs that judged any response of the item: contract mode first."""
    rows = db.execute(
        "SELECT DISTINCT j.judge, j.mode FROM responses r JOIN judgments j "
        "ON j.response_id = r.id WHERE r.item_id = ? ORDER BY j.mode = 'contract' DESC, "
        "j.judge, j.mode", (item_id,)
    )
    return [(r["judge"], r["mode"]) for r in rows]


def item_responses(db: Database, item_id: str, limit: int = RESPONSE_LIMIT
                   ) -> list[ItemResponse]:
    """The item's responses (model order) with judgments, current labels, adjudication and the
    notes/flags annotators left on them."""
    return [ItemResponse(
        r["id"], r["model"], r["variant"], r["text"], r["failure"],
        judgments=_judgments(db, r["id"]),
        labels=tuple(log.labels_of(db, "copal", r["id"])),
        adjudication=log.decision(db, "copal", r["id"]),
        remarks=tuple(log.remarks(db, "copal", r["id"])),
    ) for r in db.execute(
        "SELECT id, model, variant, text, failure FROM responses WHERE item_id = ? "
        "ORDER BY model, variant LIMIT ?", (item_id, limit)).fetchall()]


def _judgments(db: Database, response_id: str) -> dict[tuple[str, str], ItemJudgment]:
    out = {}
    for j in db.execute(
            "SELECT judge, mode, observed, error, direction, evidence, facet, rationale, "
            "failure FROM judgments WHERE response_id = ?", (response_id,)):
        observed, evidence = loads(j["observed"]), loads(j["evidence"])
        out[(j["judge"], j["mode"])] = ItemJudgment(
            j["judge"], j["mode"],
            [str(o) for o in observed] if isinstance(observed, list) else None,
            j["error"], j["direction"], j["rationale"], j["failure"],
            evidence={str(k): str(v) for k, v in evidence.items()}
            if isinstance(evidence, dict) else None,
            facet=j["facet"])
    return out


def projection_errors(db: Database, item_ids: list[str], judge: str, mode: str
                      ) -> dict[tuple[str, str], int | None]:
    """(item id, model) -> the judge's error on the base variant, for the given items (an item
    and its projections: a composed item that fails while every projection passes is a
    composition-induced failure). Driven by the item ids, never by the judge's index, which
    would visit every judgment that judge ever made."""
    if not item_ids:
        return {}
    marks = ", ".join("?" for _ in item_ids)
    rows = db.execute(
        "SELECT r.item_id, r.model, j.error FROM responses r CROSS JOIN judgments j "
        f"WHERE r.item_id IN ({marks}) AND r.variant = 'base' AND j.response_id = r.id "
        "AND j.judge = ? AND j.mode = ?", (*item_ids, judge, mode)
    )
    return {(r["item_id"], r["model"]): r["error"] for r in rows}
