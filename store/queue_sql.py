"""SQL for the label queue and the adjudication queue (see copal_tui.labelqueue for the rules).

Owns reads and writes of `queue_order` (each response's fixed place in the queue) and
`queue_leases` (numbered, time-limited slots), the context a labelling or adjudication screen shows for one
response (query, active clauses, contract, judge marks, annotators' labels, notes and flags) and
progress counts. The adjudication candidates and rows are in store.adjudication_sql.

Every query that walks the queue is keyset-paged (`position > ?` / `response_id > ?` with LIMIT),
so a 100,000-response database costs an index seek, not a full load. Timestamps are ISO text from
`store.db.utcnow`, so "live" is a plain string comparison `expires_at > now`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from store.db import Database, loads, utcnow

# A response enters the label queue when it was answered (text, no failure) for an item in the
# evaluation suite: a selected item or a projection of one (what the judge stage judges). Text
# and failure are checked once, when the response gets its place; the selection is re-checked on
# every walk (a later `select` may change it) through the item id kept in queue_order.
_ELIGIBLE = (
    "JOIN items i ON i.id = q.item_id LEFT JOIN items p ON p.id = i.parent_item_id "
    "WHERE (i.selected = 1 OR p.selected = 1)"
)

# `who` holds a current label on the response (latest label/undo event is a label).
# Every `+x.action` keeps SQLite on the (response_id, annotator, id) or (annotator, id) index:
# left to itself it picks the low-selectivity action index and scans every label per row.
_HAS_LABEL = (
    "EXISTS (SELECT 1 FROM label_events e WHERE e.response_id = {rid} AND e.annotator = {who} "
    "AND +e.action = 'label' AND NOT EXISTS (SELECT 1 FROM label_events u "
    "WHERE u.response_id = e.response_id AND u.annotator = e.annotator "
    "AND +u.action IN ('label', 'undo') AND u.id > e.id))"
)
# `who` is done with the response: labelled or skipped it, and did not undo since.
_DONE = (
    "EXISTS (SELECT 1 FROM label_events e WHERE e.response_id = {rid} AND e.annotator = {who} "
    "AND +e.action IN ('label', 'skip') AND NOT EXISTS (SELECT 1 FROM label_events u "
    "WHERE u.response_id = e.response_id AND u.annotator = e.annotator "
    "AND +u.action = 'undo' AND u.id > e.id))"
)


# A label event that is still current: no later label/undo by the same annotator on it.
_CURRENT = (
    "+e.action = 'label' AND NOT EXISTS (SELECT 1 FROM label_events u "
    "WHERE u.response_id = e.response_id AND u.annotator = e.annotator "
    "AND +u.action IN ('label', 'undo') AND u.id > e.id)"
)


def _one(db: Database, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return None if row is None else row[0]


# ------------------------------------------------------------------ queue order


def unplaced_ids(db: Database) -> list[str]:
    """Responses without a queue position: a scan of the primary-key index only, so it costs
    little on a large database (no response text is read)."""
    return [r[0] for r in db.execute(
        "SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM queue_order)")]


def eligible_among(db: Database, ids: Sequence[str]) -> list[dict[str, Any]]:
    """Of `ids`, the eligible responses with what ordering needs (id, item, model, pattern)."""
    out: list[dict[str, Any]] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        marks = ",".join("?" * len(chunk))
        out += [dict(r) for r in db.execute(
            "SELECT r.id AS response_id, r.item_id, r.model, "
            "COALESCE(i.pattern, p.pattern) AS pattern FROM responses r "
            "JOIN items i ON i.id = r.item_id LEFT JOIN items p ON p.id = i.parent_item_id "
            f"WHERE r.id IN ({marks}) AND r.text IS NOT NULL AND r.failure IS NULL "
            "AND (i.selected = 1 OR p.selected = 1)", chunk)]
    return out


def stratum_sizes(db: Database) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in
            db.execute("SELECT stratum, COUNT(*) FROM queue_order GROUP BY stratum")}


def max_position(db: Database) -> int:
    return int(_one(db, "SELECT COALESCE(MAX(position), 0) FROM queue_order") or 0)


def insert_order(db: Database, rows: Iterable[tuple[str, str, int, str]]) -> int:
    """Append (response_id, item_id, position, stratum) rows; a placed response keeps its
    place."""
    now = utcnow()
    # In id order: the primary-key and foreign-key B-trees are then walked sequentially, which
    # is several times faster than hash order on a large first fill.
    cur = db.conn.executemany(
        "INSERT OR IGNORE INTO queue_order (response_id, item_id, position, stratum, "
        "created_at) VALUES (?, ?, ?, ?, ?)", sorted((*row, now) for row in rows))
    return int(cur.rowcount or 0)


def position_of(db: Database, response_id: str) -> int | None:
    value = _one(db, "SELECT position FROM queue_order WHERE response_id = ?", (response_id,))
    return None if value is None else int(value)


# ------------------------------------------------------------------ leases


# Other annotators holding response {rid}: a current label, or a live label lease.
_HOLDERS = (
    "SELECT COUNT(*) FROM (SELECT l.annotator FROM label_events l "
    "WHERE l.response_id = {rid} AND l.annotator != :who AND +l.action = 'label' "
    "AND NOT EXISTS (SELECT 1 FROM label_events u WHERE u.response_id = l.response_id "
    "AND u.annotator = l.annotator AND +u.action IN ('label', 'undo') AND u.id > l.id) "
    "UNION SELECT k.annotator FROM queue_leases k WHERE k.queue = 'label' "
    "AND k.response_id = {rid} AND k.annotator != :who AND k.expires_at > :now)"
)


def next_open(db: Database, who: str, overlap: int, now: str, after: int = 0,
              limit: int = 1) -> list[tuple[str, int]]:
    """The first queue responses after position `after` that `who` may take: not done by them,
    and fewer than `overlap` other annotators holding a current label or a live lease."""
    sql = (
        "SELECT q.response_id, q.position FROM queue_order q " + _ELIGIBLE +
        " AND q.position > :after AND NOT " + _DONE.format(rid="q.response_id", who=":who") +
        " AND (" + _HOLDERS.format(rid="q.response_id") + ") < :overlap "
        "ORDER BY q.position LIMIT :limit"
    )
    params = {"who": who, "now": now, "after": after, "overlap": overlap, "limit": limit}
    return [(r[0], int(r[1])) for r in db.execute(sql, params)]


def holders(db: Database, response_id: str, who: str, now: str) -> int:
    """Other annotators holding the response: a current label or a live label lease."""
    return int(_one(db, _HOLDERS.format(rid=":rid"),
                    {"rid": response_id, "who": who, "now": now}) or 0)


def held_slots(db: Database, queue: str, response_id: str, now: str) -> set[int]:
    """Slot numbers still owned: a live lease, or (label queue) a holder with a current label."""
    label = _HAS_LABEL.format(rid="k.response_id", who="k.annotator")
    owned = f" OR ({label})" if queue == "label" else ""
    return {int(r[0]) for r in db.execute(
        f"SELECT k.slot FROM queue_leases k WHERE k.queue = ? AND k.response_id = ? "
        f"AND (k.expires_at > ?{owned})", (queue, response_id, now))}


def drop_stale_leases(db: Database, queue: str, response_id: str, now: str) -> None:
    """Free the slots of expired leases whose holder left without a label."""
    label = _HAS_LABEL.format(rid="queue_leases.response_id", who="queue_leases.annotator")
    keep = f" AND NOT ({label})" if queue == "label" else ""
    db.execute(f"DELETE FROM queue_leases WHERE queue = ? AND response_id = ? "
               f"AND expires_at <= ?{keep}", (queue, response_id, now))


def lease_of(db: Database, queue: str, response_id: str, who: str) -> dict[str, Any] | None:
    row = db.execute("SELECT * FROM queue_leases WHERE queue = ? AND response_id = ? "
                     "AND annotator = ?", (queue, response_id, who)).fetchone()
    return None if row is None else dict(row)


def put_lease(db: Database, queue: str, response_id: str, who: str, slot: int, now: str,
              expires: str) -> None:
    db.execute(
        "INSERT INTO queue_leases (queue, response_id, slot, annotator, leased_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (queue, response_id, annotator) "
        "DO UPDATE SET leased_at = excluded.leased_at, expires_at = excluded.expires_at",
        (queue, response_id, slot, who, now, expires))


def extend_lease(db: Database, queue: str, response_id: str, who: str, expires: str) -> int:
    cur = db.execute("UPDATE queue_leases SET expires_at = ? WHERE queue = ? AND "
                     "response_id = ? AND annotator = ?", (expires, queue, response_id, who))
    return int(cur.rowcount or 0)


def end_lease(db: Database, queue: str, response_id: str, who: str, now: str) -> None:
    """Let a lease lapse now (its slot stays owned if the holder labelled the response)."""
    db.execute("UPDATE queue_leases SET expires_at = ? WHERE queue = ? AND response_id = ? "
               "AND annotator = ? AND expires_at > ?", (now, queue, response_id, who, now))


def open_lease(db: Database, who: str, now: str) -> str | None:
    """`who`'s earliest live label lease on a response they have not finished (resume)."""
    return _one(
        db,
        "SELECT k.response_id FROM queue_leases k JOIN queue_order q "
        "ON q.response_id = k.response_id WHERE k.queue = 'label' AND k.annotator = :who "
        "AND k.expires_at > :now AND NOT " + _DONE.format(rid="k.response_id", who=":who") +
        " ORDER BY q.position LIMIT 1", {"who": who, "now": now})


def live_leases(db: Database, queue: str, now: str) -> list[dict[str, Any]]:
    return [dict(r) for r in db.execute(
        "SELECT * FROM queue_leases WHERE queue = ? AND expires_at > ? "
        "ORDER BY response_id, slot", (queue, now))]


def trail_step(db: Database, who: str, position: int, forward: bool,
               now: str) -> tuple[str, int] | None:
    """The previous/next response on `who`'s trail: labelled by them or leased to them live.
    Driven from their own events and leases (few), never by scanning the queue."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    row = db.execute(
        "SELECT q.response_id, q.position FROM queue_order q WHERE q.response_id IN ("
        "SELECT e.response_id FROM label_events e WHERE e.annotator = :who AND " + _CURRENT +
        " UNION SELECT k.response_id FROM queue_leases k WHERE k.queue = 'label' "
        "AND k.annotator = :who AND k.expires_at > :now) "
        f"AND q.position {op} :pos ORDER BY q.position {order} LIMIT 1",
        {"pos": position, "who": who, "now": now},
    ).fetchone()
    return None if row is None else (row[0], int(row[1]))


# ------------------------------------------------------------------ progress


def mine_count(db: Database, who: str) -> int:
    """Responses in the queue `who` holds a current label on (fast: walks their own events)."""
    # `+e.action` keeps the planner on the annotator index rather than the action index.
    return int(_one(
        db, "SELECT COUNT(DISTINCT e.response_id) FROM label_events e WHERE e.annotator = :who "
        "AND +e.action = 'label' AND NOT EXISTS (SELECT 1 FROM label_events u "
        "WHERE u.response_id = e.response_id AND u.annotator = e.annotator "
        "AND +u.action IN ('label', 'undo') AND u.id > e.id) "
        "AND EXISTS (SELECT 1 FROM queue_order q WHERE q.response_id = e.response_id)",
        {"who": who}) or 0)


def queue_totals(db: Database, overlap: int) -> dict[str, int]:
    """Responses in the queue and label slots filled (capped at `overlap` per response).
    Scans the queue: call it from a worker on a large database."""
    total = int(_one(db, "SELECT COUNT(*) FROM queue_order q " + _ELIGIBLE) or 0)
    filled = int(_one(
        db, "SELECT COALESCE(SUM(MIN(n, :k)), 0) FROM (SELECT l.response_id, COUNT(*) AS n "
        "FROM current_labels l JOIN queue_order q ON q.response_id = l.response_id "
        "GROUP BY l.response_id)", {"k": overlap}) or 0)
    return {"total": total, "filled": filled, "slots": total * overlap}


# ------------------------------------------------------------------ context of one response


def response_context(db: Database, response_id: str) -> dict[str, Any] | None:
    """Everything the label screen shows for a response, with contract JSON decoded."""
    row = db.execute(
        "SELECT r.id AS response_id, r.model, r.variant, r.text AS response, i.id AS item_id, "
        "i.world_id, w.name AS world_name, i.query, i.required, i.forbidden, i.method, "
        "COALESCE(i.pattern, p.pattern) AS pattern, COALESCE(i.facet, p.facet) AS facet, "
        "COALESCE(c.clause_ids, pc.clause_ids) AS clause_ids FROM responses r "
        "JOIN items i ON i.id = r.item_id JOIN worlds w ON w.id = i.world_id "
        "LEFT JOIN items p ON p.id = i.parent_item_id "
        "LEFT JOIN compositions c ON c.id = i.composition_id "
        "LEFT JOIN compositions pc ON pc.id = p.composition_id WHERE r.id = ?",
        (response_id,),
    ).fetchone()
    if row is None:
        return None
    out = dict(row)
    for col in ("required", "forbidden", "clause_ids"):
        out[col] = loads(out[col]) or []
    # Active clauses: the composition's members, plus any clause a contract item cites.
    ids = list(dict.fromkeys([*out["clause_ids"],
                              *(c.get("clause_id") for c in out["required"] + out["forbidden"]
                                if c.get("clause_id"))]))
    out["clauses"] = clauses(db, ids)
    return out


def clauses(db: Database, ids: Sequence[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = {r["id"]: dict(r) for r in db.execute(
        f"SELECT id, effect, trigger, scope, source_span FROM clauses WHERE id IN ({marks})",
        tuple(ids))}
    return [rows[i] for i in ids if i in rows]


def judgments_of(db: Database, response_id: str) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT judge, mode, observed, error, direction, rationale, failure FROM judgments "
        "WHERE response_id = ? ORDER BY mode, judge", (response_id,))
    return [{**dict(r), "observed": loads(r["observed"])} for r in rows]


def labels_of(db: Database, response_id: str) -> list[dict[str, Any]]:
    """Every annotator's current label on the response (same rows as the current_labels view,
    by index seeks rather than the view's grouping of all labels)."""
    rows = db.execute(
        "SELECT e.annotator, e.observed, e.error, e.direction, e.note, e.created_at "
        "FROM label_events e WHERE e.response_id = ? AND " + _CURRENT +
        " ORDER BY e.annotator", (response_id,))
    return [{**dict(r), "observed": loads(r["observed"]) or []} for r in rows]


def label_of(db: Database, response_id: str, who: str) -> dict[str, Any] | None:
    """`who`'s current label on the response, or None."""
    row = db.execute("SELECT * FROM label_events e WHERE e.response_id = ? AND e.annotator = ? "
                     "AND " + _CURRENT, (response_id, who)).fetchone()
    return None if row is None else {**dict(row), "observed": loads(row["observed"]) or []}


def last_label_of(db: Database, who: str) -> dict[str, Any] | None:
    """`who`'s most recent label that is still current (what undo retracts)."""
    row = db.execute("SELECT * FROM label_events e WHERE e.annotator = ? AND " + _CURRENT +
                     " ORDER BY e.id DESC LIMIT 1", (who,)).fetchone()
    return None if row is None else {**dict(row), "observed": loads(row["observed"]) or []}


def remarks_of(db: Database, response_id: str) -> list[dict[str, Any]]:
    """Notes and flags left on the response (by annotators and adjudicators)."""
    return [dict(r) for r in db.execute(
        "SELECT annotator, action, note, flag, created_at FROM label_events "
        "WHERE response_id = ? AND action IN ('note', 'flag') ORDER BY id", (response_id,))]


def note_of(db: Database, response_id: str, who: str) -> str | None:
    """`who`'s latest note on the response (shown again when they come back to it)."""
    value = _one(db, "SELECT note FROM label_events WHERE response_id = ? AND annotator = ? "
                 "AND +action = 'note' ORDER BY id DESC LIMIT 1", (response_id, who))
    return None if value is None else str(value)
