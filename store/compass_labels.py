"""SQL for the COMPASS label queue: append-only label, undo and skip events
(`compass_label_events`), annotators' current labels, what an annotator is shown, and the
queue's order.

The queue is deliberately simpler than the COPAL one (copal_tui/labelqueue.py): no leases, no
overlap and no stratified order. Every usable response of a kept query is in it, ordered by
response id (stable across runs and machines), and each annotator gets the ones they are not
done with. Done means the annotator's latest event on the response is a label or a skip; an
undo reopens it. Each write is its own `BEGIN IMMEDIATE` transaction, committed before the call
returns, so a killed process loses nothing already submitted.
"""

from __future__ import annotations

from typing import Any

from store.compass_browse_sql import CURRENT, world_policies
from store.db import Database, StoreError, utcnow, write

# A response the queue offers: its query survived verification and the model answered (or the
# pre-filter blocked it, which stores the organisation's refusal as the text).
LABELLABLE = "q.status = 'kept' AND r.failure IS NULL AND r.text IS NOT NULL"
# The annotator `:a` is done with response `r`: their latest event on it is a label or a skip.
DONE = (
    "EXISTS (SELECT 1 FROM compass_label_events e WHERE e.response_id = r.id "
    "AND e.annotator = :a AND e.action IN ('label', 'skip') AND NOT EXISTS ("
    "SELECT 1 FROM compass_label_events u WHERE u.response_id = r.id "
    "AND u.annotator = :a AND u.id > e.id))"
)


def _append(db: Database, response_id: str, annotator: str, action: str, *,
            refused: bool | None = None, compliant: bool | None = None,
            failure_mode: str | None = None, note: str | None = None,
            content_sha256: str | None = None) -> int:
    def flag(v: bool | None) -> int | None:
        return None if v is None else int(bool(v))

    cur = db.execute(
        "INSERT INTO compass_label_events (response_id, annotator, action, refused, compliant, "
        "failure_mode, note, content_sha256, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (response_id, annotator, action, flag(refused), flag(compliant), failure_mode, note,
         content_sha256, utcnow()))
    return int(cur.lastrowid or 0)


def _require(db: Database, response_id: str) -> None:
    if db.execute("SELECT 1 FROM compass_responses WHERE id = ?",
                  (response_id,)).fetchone() is None:
        raise StoreError(f"unknown COMPASS response {response_id!r}")


def label(db: Database, response_id: str, annotator: str, *, refused: bool, compliant: bool,
          failure_mode: str | None, content_sha256: str, note: str | None = None) -> int:
    """Record the annotator's label (their new current label on the response)."""
    with write(db):
        _require(db, response_id)
        return _append(db, response_id, annotator, "label", refused=refused,
                       compliant=compliant, failure_mode=failure_mode, note=note,
                       content_sha256=content_sha256)


def skip(db: Database, response_id: str, annotator: str) -> int:
    with write(db):
        _require(db, response_id)
        return _append(db, response_id, annotator, "skip")


def undo_last(db: Database, annotator: str) -> dict[str, Any] | None:
    """Retract the annotator's most recent label that is still current (appends an undo);
    returns the retracted label, or None when they have none."""
    with write(db):
        last = latest_current_label_of(db, annotator)
        if last is None:
            return None
        _append(db, last["response_id"], annotator, "undo")
        return last


def latest_current_label_of(db: Database, annotator: str) -> dict[str, Any] | None:
    # Newest first over the annotator index; stops at the first label still current.
    row = db.execute(
        f"SELECT e.* FROM compass_label_events e WHERE e.annotator = ? AND {CURRENT} "
        "ORDER BY e.id DESC LIMIT 1", (annotator,)).fetchone()
    return None if row is None else dict(row)


def current_label(db: Database, response_id: str, annotator: str) -> dict[str, Any] | None:
    row = db.execute(
        "SELECT * FROM compass_label_events WHERE response_id = ? AND annotator = ? "
        "AND action IN ('label', 'undo') ORDER BY id DESC LIMIT 1",
        (response_id, annotator)).fetchone()
    return None if row is None or row["action"] != "label" else dict(row)


def label_context(db: Database, response_id: str) -> dict[str, Any] | None:
    """What the annotator is shown: the response, its query, the intended policy and every
    policy of the world (`policies`). The query type and strategy are returned too; the screen
    decides whether to show them."""
    row = db.execute(
        "SELECT r.id AS response_id, r.model, r.variant, r.text AS response, r.prefilter, "
        "r.prefilter_model, r.prefilter_reason, q.id AS query_id, q.world_id, q.policy_id, "
        "q.query_type, q.strategy, q.form, q.text AS query, w.name AS world_name, "
        "p.kind AS policy_kind, p.text AS policy_text "
        "FROM compass_responses r JOIN compass_queries q ON q.id = r.query_id "
        "JOIN worlds w ON w.id = q.world_id "
        "LEFT JOIN policies p ON p.world_id = q.world_id AND p.id = q.policy_id "
        "WHERE r.id = ?", (response_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["policies"] = world_policies(db, out["world_id"])
    return out


# ------------------------------------------------------------------ the queue's order


def next_open(db: Database, annotator: str, after: str = "") -> str | None:
    """The first response after `after` (by id) that the annotator is not done with."""
    # CROSS JOIN keeps responses as the outer loop, walked in id order on their primary key,
    # so the search stops at the first open response instead of sorting the whole queue.
    row = db.execute(
        "SELECT r.id FROM compass_responses r CROSS JOIN compass_queries q "
        f"WHERE q.id = r.query_id AND r.id > :after AND {LABELLABLE} AND NOT {DONE} "
        "ORDER BY r.id LIMIT 1", {"after": after, "a": annotator}).fetchone()
    return None if row is None else str(row[0])


def neighbour(db: Database, response_id: str, forward: bool) -> str | None:
    """The next (or previous) response of the queue, done or not."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    row = db.execute(
        "SELECT r.id FROM compass_responses r CROSS JOIN compass_queries q "
        f"WHERE q.id = r.query_id AND r.id {op} ? AND {LABELLABLE} ORDER BY r.id {order} "
        "LIMIT 1", (response_id,)).fetchone()
    return None if row is None else str(row[0])


def last_response(db: Database) -> str | None:
    """The queue's last response (going back from past its end)."""
    row = db.execute(
        "SELECT r.id FROM compass_responses r CROSS JOIN compass_queries q "
        f"WHERE q.id = r.query_id AND {LABELLABLE} ORDER BY r.id DESC LIMIT 1").fetchone()
    return None if row is None else str(row[0])


def mine_count(db: Database, annotator: str) -> int:
    """Responses the annotator holds a current label on."""
    return int(db.execute(
        f"SELECT COUNT(*) FROM compass_label_events e WHERE e.annotator = ? AND {CURRENT}",
        (annotator,)).fetchone()[0])


def queue_total(db: Database) -> int:
    """Responses in the queue (a pass over the responses: call it from a worker)."""
    return int(db.execute(
        "SELECT COUNT(*) FROM compass_responses r JOIN compass_queries q ON q.id = r.query_id "
        f"WHERE {LABELLABLE}").fetchone()[0])
