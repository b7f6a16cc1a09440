"""SQL behind the cases of a figure: the responses one judge setting judged, narrowed the way a
report cell narrows them, and the human labels and decisions on those responses.

`copal_tui.services.cases` turns these rows into cases (the reference label by the report's rule, the
confusion cell) inside its read transaction; this module only reads. Its conditions are the
report's (`store.report.reads`): a judgment counts when it is usable (`failure IS NULL AND error IS NOT
NULL`), the target model is `responses.model` suffixed `#variant` off the base variant, a label
or decision counts when it is current (`store.annotation.annotations.CURRENT`, `CURRENT_DECISION`) and
states an error. Rows come in (item, model, variant) order, which the responses' unique index
gives without a sort. User input never becomes SQL text: every value is a parameter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.browse.lists import like_escape
from store.db import Database
from store.report.reads import MODEL

# Must equal copal_tui.metrics.rates.UNMAPPED (the store imports no copal_tui): the report's
# name for an item without a pattern or facet.
UNMAPPED = "unmapped"
DIRECTIONS = ("under_enforcement", "over_enforcement", "mixed")
# A COPAL label's (or decision's) error, from its payload in the annotation log, as
# store.report.reads reads it.
_ERROR = "json_extract(e.payload, '$.error')"
_LABELLED = (
    f"SELECT e.subject FROM annotations e WHERE e.suite = 'copal' AND {CURRENT} "
    f"AND {_ERROR} IS NOT NULL UNION SELECT e.subject FROM annotations e "
    f"WHERE e.suite = 'copal' AND {CURRENT_DECISION} AND {_ERROR} IS NOT NULL"
)


@dataclass(frozen=True)
class CaseQuery:
    """Which judged responses: one judge setting's usable judgments, narrowed by the fields
    that are set. `composed` keeps the report's composed items (selected, top-level, method
    copal); `direction` is one of DIRECTIONS, 'unknown' (an error without a known direction) or
    'none' (no error); `labelled` keeps responses with a current label or decision;
    `responses` keeps only those ids; `search` matches words in the response, item or model."""

    judge: str
    mode: str
    worlds: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    pattern: str | None = None
    facet: str | None = None
    composed: bool = False
    judge_error: int | None = None
    direction: str | None = None
    labelled: bool = False
    responses: tuple[str, ...] | None = None
    search: str = ""


@dataclass(frozen=True, slots=True)
class JudgedRow:
    """One judged response of a `CaseQuery`: its item, world, pattern, facet, method, the
    report's model key (`model#variant` off the base variant) and the setting's verdict."""

    response_id: str
    response_rowid: int
    item_id: str
    world_id: str
    pattern: str | None
    facet: str | None
    method: str | None
    model: str
    judge_error: int
    judge_direction: str | None


_SELECT = (
    f"SELECT r.id AS response_id, r.rowid AS response_rowid, r.item_id, i.world_id, "
    f"i.pattern, i.facet, i.method, {MODEL} AS model, j.error AS judge_error, "
    "j.direction AS judge_direction"
)
# CROSS JOIN keeps the loop on the responses' (item_id, model, variant) index, which is also
# the order of the rows; each judgment is one seek on its (response_id, judge, mode) key.
_FROM = (" FROM responses r CROSS JOIN judgments j ON j.response_id = r.id "
         "AND j.judge = ? AND j.mode = ? JOIN items i ON i.id = r.item_id")


def _nullable(col: str, value: str) -> tuple[str, list[Any]]:
    return (f"{col} IS NULL", []) if value == UNMAPPED else (f"{col} = ?", [value])


def _where(q: CaseQuery) -> tuple[str, list[Any]]:
    clauses = ["j.failure IS NULL", "j.error IS NOT NULL"]
    params: list[Any] = [q.judge, q.mode]
    if q.worlds:
        clauses.append(f"i.world_id IN ({','.join('?' * len(q.worlds))})")
        params += q.worlds
    if q.models:
        clauses.append(f"{MODEL} IN ({','.join('?' * len(q.models))})")
        params += q.models
    for col, value in (("i.pattern", q.pattern), ("i.facet", q.facet)):
        if value is not None:
            sql, more = _nullable(col, value)
            clauses.append(sql)
            params += more
    if q.composed:
        clauses.append("i.method = 'copal' AND i.selected = 1 AND i.parent_item_id IS NULL")
    if q.judge_error is not None:
        clauses.append("j.error = ?")
        params.append(int(q.judge_error))
    if q.direction is not None:
        clauses.append(_direction(q.direction, params))
    if q.labelled:
        clauses.append(f"r.id IN ({_LABELLED})")
    if q.responses is not None:
        clauses.append("r.id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(q.responses)))
    for word in q.search.split():
        clauses.append("(r.id LIKE ? ESCAPE '\\' OR r.item_id LIKE ? ESCAPE '\\' "
                       "OR r.model LIKE ? ESCAPE '\\')")
        params += ["%" + like_escape(word) + "%"] * 3
    return " WHERE " + " AND ".join(clauses), params


def _direction(direction: str, params: list[Any]) -> str:
    # The frame's statuses: no error, one of the three directions, or an error whose stored
    # direction is none of them (imported as a bare error flag).
    if direction == "none":
        return "j.error = 0"
    if direction == "unknown":
        params.extend(DIRECTIONS)
        return ("j.error = 1 AND (j.direction IS NULL OR j.direction NOT IN "
                f"({','.join('?' * len(DIRECTIONS))}))")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}")
    params.append(direction)
    return "j.error = 1 AND j.direction = ?"


_ORDER = " ORDER BY r.item_id, r.model, r.variant"


def judged(db: Database, q: CaseQuery) -> list[JudgedRow]:
    """Every response of the query with its item, world, pattern, facet, model key and the
    setting's verdict (`judge_error`, `judge_direction`)."""
    where, params = _where(q)
    return [JudgedRow(*r) for r in db.execute(_SELECT + _FROM + where + _ORDER, params)]


def judged_page(db: Database, q: CaseQuery, offset: int, limit: int
                ) -> tuple[list[JudgedRow], int]:
    """One page of `judged` and the number of rows in all."""
    where, params = _where(q)
    total = int(db.execute("SELECT COUNT(*)" + _FROM + where, params).fetchone()[0])
    rows = db.execute(_SELECT + _FROM + where + _ORDER + " LIMIT ? OFFSET ?",
                      [*params, max(1, int(limit)), max(0, int(offset))])
    return [JudgedRow(*r) for r in rows], total


def votes(db: Database, responses: Sequence[str] | None = None
          ) -> tuple[list[tuple[str, str, int, str | None]], list[tuple[str, str, int,
                                                                        str | None]]]:
    """The current labels and the current decisions that state an error, as (response,
    annotator or adjudicator, error, content sha256), of the given responses (None: all)."""
    within, params = "", []
    if responses is not None:
        within = " AND e.subject IN (SELECT value FROM json_each(?))"
        params = [json.dumps(list(responses))]

    def read(rule: str) -> list[tuple[str, str, int, str | None]]:
        return [(r[0], r[1], int(r[2]), r[3]) for r in db.execute(
            f"SELECT e.subject, e.annotator, {_ERROR}, e.content_sha256 FROM annotations e "
            f"WHERE e.suite = 'copal' AND {rule} AND {_ERROR} IS NOT NULL{within} "
            "ORDER BY e.subject, e.annotator", params)]

    return read(CURRENT), read(CURRENT_DECISION)


def setting_counts(db: Database, worlds: Sequence[str] = ()) -> list[tuple[str, str, int, int]]:
    """(judge, mode, usable, failed) per judge setting, as the report picks its primary judge
    from (`copal_tui.metrics.options.pick`)."""
    scope = ""
    if worlds:
        scope = (" WHERE j.response_id IN (SELECT r.id FROM responses r JOIN items i ON "
                 f"i.id = r.item_id WHERE i.world_id IN ({','.join('?' * len(worlds))}))")
    return [(r[0], r[1], int(r[2]), int(r[3])) for r in db.execute(
        "SELECT j.judge, j.mode, SUM(j.failure IS NULL AND j.error IS NOT NULL), "
        f"SUM(NOT (j.failure IS NULL AND j.error IS NOT NULL)) FROM judgments j{scope} "
        "GROUP BY j.judge, j.mode ORDER BY j.judge, j.mode", list(worlds))]
