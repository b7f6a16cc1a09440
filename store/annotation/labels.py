"""SQL for COPAL subjects (responses to composed items): which responses can be labelled, what
the label and adjudication screens show for one, and the current labels with the content they
were given on (stale detection). The labels themselves are events of the annotation log
(store/annotation/annotations.py, suite "copal", subject = response id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.annotation.annotations import CURRENT
from store.annotation.campaigns import Candidate
from store.db import Database, loads

# A response can be labelled when it was answered (text, no failure) for an item of the
# evaluation suite: a selected item or a projection of one (what the judge stage judges).
_ELIGIBLE = ("r.text IS NOT NULL AND r.failure IS NULL AND (i.selected = 1 OR p.selected = 1)")
_FROM = ("FROM responses r JOIN items i ON i.id = r.item_id "
         "LEFT JOIN items p ON p.id = i.parent_item_id")


def unplaced(db: Database, campaign: str) -> list[str]:
    """Responses not yet in the campaign: a scan of two primary-key indexes, no response text
    read, so asking costs little on a large database."""
    return [r[0] for r in db.execute(
        "SELECT id FROM responses WHERE id NOT IN (SELECT subject FROM campaign_subjects "
        "WHERE campaign = ?)", (campaign,))]


def candidates(db: Database, ids: Sequence[str] | None = None, *,
               worlds: Sequence[str] = (), models: Sequence[str] = (),
               patterns: Sequence[str] = ()) -> list[Candidate]:
    """The labellable responses (of `ids` when given, else all) matching the filters, by id,
    each in its stratum "pattern|model" (a projection's pattern is its parent's; "-" for
    none)."""
    where, params = [_ELIGIBLE], []
    for col, values in (("i.world_id", worlds), ("r.model", models),
                        ("COALESCE(i.pattern, p.pattern)", patterns)):
        if values:
            where.append(f"{col} IN ({','.join('?' * len(values))})")
            params += list(values)
    sql = ("SELECT r.id, COALESCE(NULLIF(COALESCE(i.pattern, p.pattern), ''), '-') || '|' || "
           f"r.model {_FROM} WHERE {' AND '.join(where)}")
    if ids is None:
        return [Candidate(*r) for r in db.execute(sql + " ORDER BY r.id", params)]
    out: list[Candidate] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        out += [Candidate(*r) for r in db.execute(
            sql + f" AND r.id IN ({','.join('?' * len(chunk))}) ORDER BY r.id",
            [*params, *chunk])]
    return out


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


def labels_with_content(db: Database) -> list[dict[str, Any]]:
    """Every current COPAL label with the content it refers to now (for stale detection)."""
    rows = db.execute(
        "SELECT e.id, e.subject AS response_id, e.annotator, e.content_sha256, "
        "r.text AS response, i.query, i.required, i.forbidden FROM annotations e "
        "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
        f"WHERE e.suite = 'copal' AND {CURRENT} ORDER BY e.id"
    ).fetchall()
    out = []
    for r in rows:
        d = dict(r)
        d["required"], d["forbidden"] = loads(d["required"]), loads(d["forbidden"])
        out.append(d)
    return out
