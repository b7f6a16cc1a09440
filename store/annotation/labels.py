"""SQL for COPAL subjects (responses to composed items): which responses can be labelled, what
the label and adjudication screens show for one, and the current labels with the content they
were given on (stale detection). The labels themselves are events of the annotation log
(store/annotation/annotations.py, suite "copal", subject = response id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store.annotation.annotations import CURRENT
from store.annotation.campaigns import Candidate
from store.annotation.texts import TextPart, read_part
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


def _json_list(text: str | None) -> list[Any]:
    """A stored JSON list column, decoded ([] for NULL)."""
    value = loads(text)
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Clause:
    """An active clause as the label screens show it."""

    id: str
    effect: str | None
    trigger: str
    scope: str
    source_span: str | None


@dataclass(frozen=True)
class ResponseContext:
    """Everything the label screen shows for a response. `required` and `forbidden` are the
    contract items as stored (decoded JSON objects: id, text, clause_id, ...); `clauses` are the
    composition's members plus any clause a contract item cites, in that order."""

    response_id: str
    model: str
    variant: str
    response: TextPart | None  # the part on screen first (store.annotation.texts)
    item_id: str
    world_id: str
    world_name: str | None
    query: str
    required: list[dict[str, Any]]
    forbidden: list[dict[str, Any]]
    method: str | None
    pattern: str | None
    facet: str | None
    clause_ids: list[str]
    clauses: list[Clause]


def response_context(db: Database, response_id: str,
                     part_bytes: int | None = None) -> ResponseContext | None:
    """Everything the label screen shows for a response, with contract JSON decoded: the
    response's first part of `part_bytes` (None: the whole text; see store.annotation.texts)."""
    row = db.execute(
        "SELECT r.id AS response_id, r.model, r.variant, i.id AS item_id, "
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
    required, forbidden = _json_list(row["required"]), _json_list(row["forbidden"])
    clause_ids = _json_list(row["clause_ids"])
    # Active clauses: the composition's members, plus any clause a contract item cites.
    ids = list(dict.fromkeys([*clause_ids, *(c.get("clause_id") for c in required + forbidden
                                             if c.get("clause_id"))]))
    return ResponseContext(
        row["response_id"], row["model"], row["variant"],
        read_part(db, "response", response_id, 0, part_bytes), row["item_id"],
        row["world_id"], row["world_name"], row["query"], required, forbidden, row["method"],
        row["pattern"], row["facet"], clause_ids, clauses(db, ids))


def clauses(db: Database, ids: Sequence[str]) -> list[Clause]:
    """The clauses of `ids` in that order (unknown ids left out)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = {r["id"]: Clause(r["id"], r["effect"], r["trigger"], r["scope"], r["source_span"])
            for r in db.execute(
                f"SELECT id, effect, trigger, scope, source_span FROM clauses WHERE id IN ({marks})",
                tuple(ids))}
    return [rows[i] for i in ids if i in rows]


@dataclass(frozen=True)
class CopalJudgment:
    """A judge's marks on a response (`observed` None when the judgment failed)."""

    judge: str
    mode: str
    observed: list[str] | None
    error: int | None
    direction: str | None
    rationale: str | None
    failure: str | None


def judgments_of(db: Database, response_id: str) -> list[CopalJudgment]:
    rows = db.execute(
        "SELECT judge, mode, observed, error, direction, rationale, failure FROM judgments "
        "WHERE response_id = ? ORDER BY mode, judge", (response_id,))
    return [CopalJudgment(r["judge"], r["mode"],
                          None if r["observed"] is None else _json_list(r["observed"]), r["error"],
                          r["direction"], r["rationale"], r["failure"]) for r in rows]


@dataclass(frozen=True)
class LabelContent:
    """A current COPAL label (event `id`) with the content its response has now; `required` and
    `forbidden` are the stored contract JSON, decoded."""

    id: int
    response_id: str
    annotator: str
    content_sha256: str | None
    response: str | None
    query: str
    required: list[dict[str, Any]]
    forbidden: list[dict[str, Any]]


def labels_with_content(db: Database) -> list[LabelContent]:
    """Every current COPAL label with the content it refers to now (for stale detection)."""
    rows = db.execute(
        "SELECT e.id, e.subject AS response_id, e.annotator, e.content_sha256, "
        "r.text AS response, i.query, i.required, i.forbidden FROM annotations e "
        "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
        f"WHERE e.suite = 'copal' AND {CURRENT} ORDER BY e.id"
    )
    return [LabelContent(int(r["id"]), r["response_id"], r["annotator"], r["content_sha256"],
                         r["response"], r["query"], _json_list(r["required"]),
                         _json_list(r["forbidden"])) for r in rows]
