"""SQL for label events and adjudications: current labels, last labels, stale checks.

Label events are append-only: a label, an undo (retracts the annotator's current label on that
response), a skip, a flag or a note. An annotator's current label on a response is their latest
label/undo event when that event is a label (the `current_labels` view).
"""

from __future__ import annotations

from typing import Any

from store.db import Database, loads


def current_label(db: Database, response_id: str, annotator: str) -> dict[str, Any] | None:
    # Direct on the (response_id, annotator, id) index: the view would scan every label.
    row = db.execute(
        "SELECT * FROM label_events WHERE response_id = ? AND annotator = ? "
        "AND action IN ('label', 'undo') ORDER BY id DESC LIMIT 1",
        (response_id, annotator),
    ).fetchone()
    if row is None or row["action"] != "label":
        return None
    out = dict(row)
    out["observed"] = loads(out["observed"])
    return out


def current_adjudication(db: Database, response_id: str) -> dict[str, Any] | None:
    row = db.execute(
        "SELECT * FROM current_adjudications WHERE response_id = ?", (response_id,)
    ).fetchone()
    return None if row is None else dict(row)


def latest_current_label_of(db: Database, annotator: str) -> dict[str, Any] | None:
    """The annotator's most recent label that is still current (what `undo` retracts)."""
    # Walks the annotator's events newest first (annotator index; `+e.action` keeps the planner
    # off the action index) and stops at the first label not superseded by a later label/undo.
    row = db.execute(
        "SELECT e.* FROM label_events e WHERE e.annotator = ? AND +e.action = 'label' "
        "AND NOT EXISTS (SELECT 1 FROM label_events u WHERE u.response_id = e.response_id "
        "AND u.annotator = e.annotator AND u.id > e.id AND u.action IN ('label', 'undo')) "
        "ORDER BY e.id DESC LIMIT 1",
        (annotator,),
    ).fetchone()
    return None if row is None else dict(row)


def labels_with_content(db: Database) -> list[dict[str, Any]]:
    """Every current label with the content it refers to now (for stale detection)."""
    rows = db.execute(
        "SELECT l.id, l.response_id, l.annotator, l.content_sha256, r.text AS response, "
        "i.query, i.required, i.forbidden FROM current_labels l "
        "JOIN responses r ON r.id = l.response_id JOIN items i ON i.id = r.item_id "
        "ORDER BY l.id"
    ).fetchall()
    out = []
    for r in rows:
        d = dict(r)
        d["required"], d["forbidden"] = loads(d["required"]), loads(d["forbidden"])
        out.append(d)
    return out


def count_events(db: Database, annotator: str | None = None) -> int:
    if annotator is None:
        return int(db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0])
    return int(
        db.execute("SELECT COUNT(*) FROM label_events WHERE annotator = ?", (annotator,))
        .fetchone()[0]
    )
