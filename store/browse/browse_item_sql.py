"""SQL for the item view: one item with its world, composition, active clauses, contract,
projections and responses, each response with every judgment, the annotators' current labels
and the current adjudication.

All reads are keyed lookups (item id, composition id, response ids) on existing indexes, so the
view costs the same on any size of database; responses are capped (`limit`) with a total.
The service (`copal_tui.services.browse.item_view`) reads them in one transaction.
"""

from __future__ import annotations

from typing import Any

from store.annotation import annotations as log
from store.db import Database, loads

RESPONSE_LIMIT = 200
PROJECTION_LIMIT = 50


def _label(lab: log.Annotation) -> dict[str, Any]:
    """A label or decision of the log in the shape the item screen reads."""
    return {"annotator": lab.annotator, "observed": lab.get("observed"),
            "error": lab.get("error"), "direction": lab.get("direction"),
            "facet": lab.get("facet"), "note": lab.get("note"), "created_at": lab.created_at,
            "content_sha256": lab.content_sha256}


def _decode(row: Any, *cols: str) -> dict[str, Any]:
    out = dict(row)
    for col in cols:
        if out.get(col) is not None:
            out[col] = loads(out[col])
    return out


def item_view(db: Database, item_id: str) -> dict[str, Any] | None:
    """The item and everything around it except the responses (see `item_responses`)."""
    row = db.execute(
        "SELECT i.*, w.name AS world_name FROM items i JOIN worlds w ON w.id = i.world_id "
        "WHERE i.id = ?", (item_id,)
    ).fetchone()
    if row is None:
        return None
    item = _decode(row, "required", "forbidden", "screening")
    comp = None
    if item["composition_id"]:
        crow = db.execute("SELECT * FROM compositions WHERE id = ?",
                          (item["composition_id"],)).fetchone()
        comp = None if crow is None else _decode(crow, "clause_ids")
    item["composition"] = comp
    item["clauses"] = _clauses(db, _active_clause_ids(item, comp))
    parent = None
    if item["parent_item_id"]:
        prow = db.execute("SELECT id, query, pattern, facet FROM items WHERE id = ?",
                          (item["parent_item_id"],)).fetchone()
        parent = None if prow is None else dict(prow)
    item["parent"] = parent
    item["projections"] = [
        _decode(r, "required", "forbidden") for r in db.execute(
            "SELECT id, query, required, forbidden FROM items WHERE parent_item_id = ? "
            "ORDER BY rowid LIMIT ?", (item_id, PROJECTION_LIMIT))
    ]
    item["response_total"] = int(db.execute(
        "SELECT COUNT(*) FROM responses WHERE item_id = ?", (item_id,)).fetchone()[0])
    return item


def _active_clause_ids(item: dict[str, Any], comp: dict[str, Any] | None) -> list[str]:
    # A composed item activates its composition's clauses. A projection keeps one clause of
    # its parent's composition, so its active clauses are the ones its own contract cites.
    cited = [c.get("clause_id") for c in (item["required"] or []) + (item["forbidden"] or [])]
    cited_ids = [c for c in cited if c]
    if item["parent_item_id"] or comp is None:
        kept = (item.get("screening") or {}).get("kept_clause") \
            if isinstance(item.get("screening"), dict) else None
        return list(dict.fromkeys(([kept] if kept else []) + cited_ids))
    return list(dict.fromkeys(list(comp["clause_ids"]) + cited_ids))


def _clauses(db: Database, ids: list[str]) -> list[dict[str, Any]]:
    out = []
    for cid in ids:
        row = db.execute("SELECT * FROM clauses WHERE id = ?", (cid,)).fetchone()
        out.append({"id": cid, "missing": True} if row is None
                   else _decode(row, "policy_ids"))
    return out


def item_judges(db: Database, item_id: str) -> list[tuple[str, str]]:
    """(judge, mode) pairs that judged any response of the item: contract mode first."""
    rows = db.execute(
        "SELECT DISTINCT j.judge, j.mode FROM responses r JOIN judgments j "
        "ON j.response_id = r.id WHERE r.item_id = ? ORDER BY j.mode = 'contract' DESC, "
        "j.judge, j.mode", (item_id,)
    )
    return [(r["judge"], r["mode"]) for r in rows]


def item_responses(db: Database, item_id: str, limit: int = RESPONSE_LIMIT
                   ) -> list[dict[str, Any]]:
    """The item's responses (model order) with judgments, current labels, adjudication and the
    notes/flags annotators left on them."""
    responses = [dict(r) for r in db.execute(
        "SELECT id, model, variant, text, failure FROM responses WHERE item_id = ? "
        "ORDER BY model, variant LIMIT ?", (item_id, limit))]
    for resp in responses:
        rid = resp["id"]
        resp["judgments"] = {
            (j["judge"], j["mode"]): _decode(j, "observed", "evidence")
            for j in db.execute(
                "SELECT judge, mode, observed, error, direction, evidence, facet, rationale, "
                "failure FROM judgments WHERE response_id = ?", (rid,))
        }
        resp["labels"] = [_label(lab) for lab in log.labels_of(db, "copal", rid)]
        adj = log.decision(db, "copal", rid)
        resp["adjudication"] = None if adj is None else {
            **_label(adj), "adjudicator": adj.annotator}
        resp["remarks"] = [{"annotator": r.annotator, "action": r.action,
                            "note": r.get("note"), "flag": r.get("flag"),
                            "created_at": r.created_at}
                           for r in log.remarks(db, "copal", rid)]
    return responses


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
