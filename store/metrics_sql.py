"""All SQL behind `copal report` and `copal export`.

Speed is the point (DESIGN section 7: a full report over 100,000 judgments in under a second).
The big tables are read once each, in bulk (`items`, `response_columns`, `judgment_codes`),
and grouped in numpy by `copal_tui.metrics.frame`: measured on 300,000 judgments, one GROUP BY
query per report section re-read and re-sorted the judgments each time and took 12 s in all,
the bulk reads take well under one. Small tables (worlds, policies, clauses, compositions,
labels) are still aggregated here. Every query is ordered so the same database gives the same
rows.

Conventions:
- a judgment is *usable* when `failure IS NULL AND error IS NOT NULL`; the others are counted
  as failed, never used;
- the target model is `responses.model`, suffixed `#variant` when the variant is not 'base',
  so two system-prompt variants of one model are two rows, never silently pooled;
- `worlds` (a list of world ids, or None for all) restricts a query through `world_id`.
"""

from __future__ import annotations

from typing import Any

from store.db import Database

MODEL = "CASE WHEN r.variant = 'base' THEN r.model ELSE r.model || '#' || r.variant END"


def _scope(worlds: list[str] | None, col: str = "i.world_id") -> tuple[str, tuple[str, ...]]:
    if not worlds:
        return "", ()
    return f" AND {col} IN ({','.join('?' * len(worlds))})", tuple(worlds)


def _all(db: Database, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in db.execute(sql, params).fetchall()]


# ------------------------------------------------------------------ bulk reads

# Why group_concat: the report reads every judgment once. Returning 100,000s of Python tuples
# costs more than the scan itself; one comma-separated string per column is parsed by numpy in
# C (copal_tui.metrics.frame). All columns of one aggregate query see the rows in the same
# order, so the strings stay aligned. Text columns use the separator char(30) (record
# separator), which no model name contains.


def known_worlds(db: Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM worlds ORDER BY id")]


def judge_settings(db: Database) -> list[tuple[str, str]]:
    """Every (judge, mode) that has judgments; read from the (judge, mode) index alone."""
    return _all(db, "SELECT judge, mode FROM judgments GROUP BY judge, mode ORDER BY judge, mode")


def items(db: Database) -> list[tuple[Any, ...]]:
    """(id, world, pattern, facet, method, selected, parent id, active clauses) of every item,
    by id. Active clauses: the clauses of the item's composition."""
    return _all(
        db,
        "SELECT i.id, i.world_id, i.pattern, i.facet, i.method, i.selected, "
        "i.parent_item_id, COALESCE(json_array_length(c.clause_ids), 0) FROM items i "
        "LEFT JOIN compositions c ON c.id = i.composition_id ORDER BY i.id",
    )


def response_columns(db: Database) -> tuple[str | None, ...]:
    """Aligned group_concat columns over all responses: rowids, item ids and target model
    keys (both char(30)-separated). Read from the (item_id, model, variant) index alone."""
    row = db.execute(
        f"SELECT group_concat(r.rowid), group_concat(r.item_id, char(30)), "
        f"group_concat({MODEL}, char(30)) FROM responses r"
    ).fetchone()
    return tuple(row)


def failed_responses(db: Database) -> str | None:
    """Rowids of responses without an answer (the call failed or gave no text)."""
    row = db.execute("SELECT group_concat(rowid) FROM responses "
                     "WHERE failure IS NOT NULL OR text IS NULL").fetchone()
    return row[0]


def judgment_codes(db: Database, settings: list[tuple[str, str]]) -> str | None:
    """Every judgment packed into one integer: (response rowid * S + setting) * 8 + status,
    with S = len(settings), the setting the index in `settings`, and status 0 = no error,
    1 = under-enforcement, 2 = over-enforcement, 3 = mixed, 4 = error of unknown direction
    (a bare error flag), 5 = failed or no verdict."""
    if not settings:
        return None
    sid = "CASE " + " ".join(f"WHEN j.judge = ? AND j.mode = ? THEN {k}"
                             for k in range(len(settings))) + " END"
    status = ("CASE WHEN j.failure IS NOT NULL OR j.error IS NULL THEN 5 WHEN j.error = 0 THEN 0 "
              "WHEN j.direction = 'under_enforcement' THEN 1 "
              "WHEN j.direction = 'over_enforcement' THEN 2 "
              "WHEN j.direction = 'mixed' THEN 3 ELSE 4 END")
    params = tuple(v for pair in settings for v in pair)
    row = db.execute(
        f"SELECT group_concat((r.rowid * {len(settings)} + {sid}) * 8 + {status}) "
        "FROM judgments j JOIN responses r ON r.id = j.response_id",
        params,
    ).fetchone()
    return row[0]


def label_rows(db: Database) -> list[tuple[int, str, int]]:
    """(response rowid, annotator, error) of every current label."""
    return _all(db, "SELECT r.rowid, l.annotator, l.error FROM current_labels l "
                    "JOIN responses r ON r.id = l.response_id WHERE l.error IS NOT NULL "
                    "ORDER BY r.rowid, l.annotator")


def adjudication_rows(db: Database) -> list[tuple[int, str, int]]:
    """(response rowid, adjudicator, error) of every current adjudication."""
    return _all(db, "SELECT r.rowid, a.adjudicator, a.error FROM current_adjudications a "
                    "JOIN responses r ON r.id = a.response_id WHERE a.error IS NOT NULL "
                    "ORDER BY r.rowid")


# ------------------------------------------------------------------ labels with their ids


def current_labels(db: Database, worlds: list[str] | None) -> list[tuple[str, str, int]]:
    """(response, annotator, error) of every current label in scope."""
    where, params = _scope(worlds)
    return _all(
        db,
        "SELECT l.response_id, l.annotator, l.error FROM current_labels l "
        "JOIN responses r ON r.id = l.response_id JOIN items i ON i.id = r.item_id "
        f"WHERE l.error IS NOT NULL{where} ORDER BY l.response_id, l.annotator",
        params,
    )


def current_adjudications(db: Database, worlds: list[str] | None) -> list[tuple[str, str, int]]:
    where, params = _scope(worlds)
    return _all(
        db,
        "SELECT a.response_id, a.adjudicator, a.error FROM current_adjudications a "
        "JOIN responses r ON r.id = a.response_id JOIN items i ON i.id = r.item_id "
        f"WHERE a.error IS NOT NULL{where} ORDER BY a.response_id",
        params,
    )


# ------------------------------------------------------------------ corpus profile


def corpus_counts(db: Database, worlds: list[str] | None) -> dict[str, list[tuple[Any, ...]]]:
    """Grouped counts of the small tables for the corpus profile (items, responses and
    judgments are counted from the arrays of the bulk reads), each list sorted by its key."""
    w_where, w_params = _scope(worlds, "world_id")
    id_where, id_params = _scope(worlds, "id")
    q: dict[str, tuple[str, tuple[Any, ...]]] = {
        "worlds": (f"SELECT id, COUNT(*) FROM worlds WHERE 1 = 1{id_where} GROUP BY id "
                   "ORDER BY id", id_params),
        "policies_by_kind": (f"SELECT kind, COUNT(*) FROM policies WHERE 1 = 1{w_where} "
                             "GROUP BY kind ORDER BY kind", w_params),
        "clauses_by_effect": (f"SELECT COALESCE(effect, 'none'), COUNT(*) FROM clauses "
                              f"WHERE 1 = 1{w_where} GROUP BY 1 ORDER BY 1", w_params),
        "compositions_by_pattern": (
            f"SELECT pattern, COUNT(*) FROM compositions WHERE status = 'confirmed'{w_where} "
            "GROUP BY pattern ORDER BY pattern", w_params),
        "compositions_by_status": (f"SELECT status, COUNT(*) FROM compositions "
                                   f"WHERE 1 = 1{w_where} GROUP BY status ORDER BY status",
                                   w_params),
    }
    return {key: _all(db, sql, params) for key, (sql, params) in q.items()}


# ------------------------------------------------------------------ provenance


def runs_involved(db: Database, worlds: list[str] | None) -> list[tuple[str, str, str, str]]:
    """(id, stage, status, manifest JSON) of every run that wrote a row in scope."""
    w_where, w_params = _scope(worlds, "world_id")
    i_where, i_params = _scope(worlds)
    return _all(
        db,
        f"""
        WITH used AS (
            SELECT run_id FROM clauses WHERE run_id IS NOT NULL{w_where}
            UNION SELECT run_id FROM compositions WHERE run_id IS NOT NULL{w_where}
            UNION SELECT run_id FROM items i WHERE run_id IS NOT NULL{i_where}
            UNION SELECT r.run_id FROM responses r JOIN items i ON i.id = r.item_id
                  WHERE r.run_id IS NOT NULL{i_where}
            UNION SELECT j.run_id FROM judgments j JOIN responses r ON r.id = j.response_id
                  JOIN items i ON i.id = r.item_id WHERE j.run_id IS NOT NULL{i_where}
        )
        SELECT id, stage, status, manifest FROM runs WHERE id IN (SELECT run_id FROM used)
        ORDER BY started_at, id
        """,
        (*w_params, *w_params, *i_params, *i_params, *i_params),
    )


def quick_check(db: Database) -> str:
    rows = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
    return "; ".join(str(r) for r in rows)


def unexported_counts(db: Database) -> list[tuple[str, int]]:
    """Rows the interchange export leaves out: failed responses and failed judgments."""
    return _all(db, "SELECT 'responses', COUNT(*) FROM responses WHERE failure IS NOT NULL OR "
                    "text IS NULL UNION ALL SELECT 'judgments', COUNT(*) FROM judgments "
                    "WHERE failure IS NOT NULL OR error IS NULL")
