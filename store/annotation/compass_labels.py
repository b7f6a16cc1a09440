"""SQL for COMPASS subjects (responses to single-policy queries): which responses can be
labelled and what the annotator is shown for one. The labels themselves are events of the
annotation log (store/annotation/annotations.py, suite "compass", subject = COMPASS response id); the
queue is the one every suite shares (copal_tui.services.annotation.queue).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from store.annotation.campaigns import Candidate
from store.annotation.texts import TextPart, read_part
from store.browse.compass import world_policies
from store.db import Database
from store.pipeline.rows import PolicyRow

# A response the queue offers: its query survived verification and the model answered (or the
# pre-filter blocked it, which stores the organisation's refusal as the text).
LABELLABLE = "q.status = 'kept' AND r.failure IS NULL AND r.text IS NOT NULL"


def candidates(db: Database, *, worlds: Sequence[str] = (), models: Sequence[str] = (),
               query_types: Sequence[str] = ()) -> list[Candidate]:
    """The labellable responses matching the filters, by response id (the queue's order: stable
    across runs and machines), each in its stratum "query type|model" (the model with its
    variant when not the base one)."""
    where, params = [LABELLABLE], []
    for col, values in (("q.world_id", worlds), ("r.model", models),
                        ("q.query_type", query_types)):
        if values:
            where.append(f"{col} IN ({','.join('?' * len(values))})")
            params += list(values)
    # CROSS JOIN keeps responses as the outer loop, walked in id order on their primary key.
    return [Candidate(*r) for r in db.execute(
        "SELECT r.id, q.query_type || '|' || CASE WHEN r.variant = 'base' THEN r.model "
        "ELSE r.model || '#' || r.variant END FROM compass_responses r "
        f"CROSS JOIN compass_queries q WHERE q.id = r.query_id AND {' AND '.join(where)} "
        "ORDER BY r.id", params)]


def exists(db: Database, response_id: str) -> bool:
    return db.execute("SELECT 1 FROM compass_responses WHERE id = ?",
                      (response_id,)).fetchone() is not None


@dataclass(frozen=True)
class CompassContext:
    """What the COMPASS annotator is shown for a response. `policy_rows` are every policy of
    the world in their order (as the COMPASS browse reads them); `policy_kind` and
    `policy_text` are None when the intended policy is not one of them."""

    response_id: str
    model: str
    variant: str
    response: TextPart | None  # the part on screen first (store.annotation.texts)
    prefilter: str | None
    prefilter_model: str | None
    prefilter_reason: str | None
    query_id: str
    world_id: str
    policy_id: str
    query_type: str
    strategy: str | None
    form: str | None
    query: str
    world_name: str | None
    policy_kind: str | None
    policy_text: str | None
    policy_rows: tuple[PolicyRow, ...]

    @property
    def policies(self) -> list[dict[str, str]]:
        """The world's policies as the label's content hash covers them (id, kind, text: the
        hash of what was shown must not change with how the rows are typed)."""
        return [{"id": p.id, "kind": p.kind, "text": p.text} for p in self.policy_rows]


def label_context(db: Database, response_id: str,
                  part_bytes: int | None = None) -> CompassContext | None:
    """What the annotator is shown: the response (its first part of `part_bytes`; None: the
    whole text), its query, the intended policy and every policy of the world (`policies`). The
    query type and strategy are returned too; the screen decides whether to show them."""
    row = db.execute(
        "SELECT r.id AS response_id, r.model, r.variant, r.prefilter, "
        "r.prefilter_model, r.prefilter_reason, q.id AS query_id, q.world_id, q.policy_id, "
        "q.query_type, q.strategy, q.form, q.text AS query, w.name AS world_name, "
        "p.kind AS policy_kind, p.text AS policy_text "
        "FROM compass_responses r JOIN compass_queries q ON q.id = r.query_id "
        "JOIN worlds w ON w.id = q.world_id "
        "LEFT JOIN policies p ON p.world_id = q.world_id AND p.id = q.policy_id "
        "WHERE r.id = ?", (response_id,)).fetchone()
    if row is None:
        return None
    return CompassContext(**dict(row), policy_rows=tuple(world_policies(db, row["world_id"])),
                          response=read_part(db, "compass_response", response_id, 0, part_bytes))
