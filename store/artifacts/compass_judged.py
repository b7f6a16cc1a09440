"""SQL behind COMPASS judged-results interop: finding the organisations an import names, the
parent link a later import makes possible, and the counts of the COMPASS summary's exclusions.

Rows themselves are written with `store.artifacts.compass` and read by id with
`store.artifacts.compass_interchange`. Callers open the transaction with `store.db.write`.
"""

from __future__ import annotations

from typing import Any

from store.db import Database


def worlds_by_name(db: Database) -> dict[str, list[str]]:
    """World name -> ids of the worlds with that name (a COMPASS import names a world after
    its organisation; other worlds may share a name)."""
    out: dict[str, list[str]] = {}
    for wid, name in db.execute("SELECT id, name FROM worlds ORDER BY id"):
        out.setdefault(str(name), []).append(str(wid))
    return out


def world_names(db: Database, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = db.execute(f"SELECT id, name FROM worlds WHERE id IN ({','.join('?' * len(ids))})",
                      tuple(ids))
    return {str(r[0]): str(r[1]) for r in rows}


def set_parent(db: Database, query_id: str, parent_id: str) -> None:
    """Link a stored edge query to its base query (imported after it)."""
    db.execute("UPDATE compass_queries SET parent_id = ? WHERE id = ? AND parent_id IS NULL",
               (parent_id, query_id))


def failed_judgments(db: Database, worlds: list[str] | None,
                     known: list[str]) -> list[tuple[Any, ...]]:
    """(judge, model, variant, reason, count) of judgments without a usable verdict on answered
    responses to kept queries; reason is the stored failure when it is one of `known`
    (`domain.compass_rules.FAILURES`), else '' (a failed judge call of a copal run, whose
    texts are all different)."""
    where = ""
    params: tuple[str, ...] = ()
    if worlds:
        where, params = f" AND q.world_id IN ({','.join('?' * len(worlds))})", tuple(worlds)
    case = "CASE WHEN j.failure IN (" + ",".join("?" * len(known)) + ") THEN j.failure " \
           "ELSE '' END" if known else "''"
    return [tuple(r) for r in db.execute(
        f"SELECT j.judge, r.model, r.variant, {case}, COUNT(*) FROM compass_judgments j "
        "JOIN compass_responses r ON r.id = j.response_id "
        "JOIN compass_queries q ON q.id = r.query_id "
        "WHERE q.status = 'kept' AND r.failure IS NULL AND r.text IS NOT NULL "
        f"AND (j.failure IS NOT NULL OR j.aligned IS NULL){where} "
        "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
        (*known, *params))]
