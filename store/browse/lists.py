"""SQL for the browse screens' paged, filterable lists: worlds, and a world's policies,
clauses, compositions, items and runs (the item view is in store/browse/item.py).

Every list is one page: the page's keys are chosen in a sub-select with LIMIT/OFFSET and the
per-row aggregates are computed only for those rows, so a list costs the same on a database with
100,000 responses as on a small one (plus one COUNT for the total). Lists follow insertion order
(rowid; `position` for policies), which the single-column indexes on world_id already give
without a sort. User input never becomes SQL text: free words are LIKE parameters and
`key:value` filters are looked up in per-list tables of fixed SQL fragments. Nothing here
begins a transaction: the caller's service does (`copal_tui.services.browse`), so a page and its
count are one snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.annotation.annotations import CURRENT
from store.db import Database, dumps
from store.pipeline.runs import RunRecord

# Response `r` has at least one current COPAL label (looked up through r's own events on the
# annotation log's subject index).
HAS_CURRENT_LABEL = (
    "EXISTS (SELECT 1 FROM annotations e WHERE e.suite = 'copal' AND e.subject = r.id "
    f"AND {CURRENT})"
)


class FilterError(ValueError):
    """A `key:value` filter the list does not know, or a value of the wrong kind."""


@dataclass(frozen=True)
class PageRequest:
    search: str = ""
    filters: Mapping[str, str] = field(default_factory=dict)
    offset: int = 0
    limit: int = 100


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    total: int
    offset: int
    limit: int


# A filter: a SQL fragment with exactly one `?` and a function turning the typed value into the
# parameter (raising ValueError when the value does not fit).
Filter = tuple[str, Callable[[str], object]]


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def prefix_filter(col: str) -> Filter:
    return f"{col} LIKE ? ESCAPE '\\'", lambda v: like_escape(v) + "%"


def _suffix_member(col: str) -> Filter:
    # A JSON list of ids; `C09` matches `harbor-clinics:C09` (ids are typed without the world).
    return (f"EXISTS (SELECT 1 FROM json_each({col}) WHERE value LIKE ? ESCAPE '\\')",
            lambda v: "%" + like_escape(v))


def flag_value(value: str) -> int:
    v = value.strip().lower()
    if v in ("1", "y", "yes", "true", "on"):
        return 1
    if v in ("0", "n", "no", "false", "off"):
        return 0
    raise ValueError("expects yes or no")


def _exact(col: str) -> Filter:
    return f"{col} = ?", str


def where_clause(req: PageRequest, search_cols: Sequence[str], filters: Mapping[str, Filter],
           base: Sequence[str] = (), base_params: Sequence[object] = ()
           ) -> tuple[str, list[object]]:
    clauses, params = list(base), list(base_params)
    for key, value in req.filters.items():
        spec = filters.get(key.lower())
        if spec is None:
            known = ", ".join(sorted(filters)) or "none"
            raise FilterError(f"unknown filter {key!r} (this list knows: {known})")
        sql, convert = spec
        try:
            params.append(convert(value))
        except ValueError as exc:
            raise FilterError(f"{key}: {exc}") from None
        clauses.append(sql)
    for word in req.search.split():
        pattern = "%" + like_escape(word) + "%"
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in search_cols) + ")")
        params.extend([pattern] * len(search_cols))
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def read_page(db: Database, req: PageRequest, *, table: str, keys: str, order: str,
          outer: str, where: tuple[str, list[object]], outer_params: Sequence[object] = (),
          final: str = "p._ord") -> Page:
    """Count the matches, then select one page of keys and decorate only those rows.

    `outer` is the decorating SELECT over the alias `p` (the page of `keys` columns, which
    include `_ord`); `outer_params` are its parameters; `final` re-states the page's order.
    """
    sql_where, params = where
    total = int(db.execute(f"SELECT COUNT(*) FROM {table}{sql_where}", params).fetchone()[0])
    limit, offset = max(1, int(req.limit)), max(0, int(req.offset))
    inner = f"SELECT {keys} FROM {table}{sql_where} ORDER BY {order} LIMIT ? OFFSET ?"
    rows = db.execute(f"{outer} FROM ({inner}) p ORDER BY {final}",
                      [*outer_params, *params, limit, offset])
    return Page([dict(r) for r in rows], total, offset, limit)


# ------------------------------------------------------------------ worlds


WORLD_FILTERS: dict[str, Filter] = {
    "risk": prefix_filter("risk_tier"),
    "industry": prefix_filter("industry"),
}


_WORLD_COUNTS = (
    "SELECT p.*, "
    "(SELECT COUNT(*) FROM policies x WHERE x.world_id = p.id) AS policies, "
    "(SELECT COUNT(*) FROM clauses x WHERE x.world_id = p.id) AS clauses, "
    "(SELECT COUNT(*) FROM compositions x WHERE x.world_id = p.id) AS compositions, "
    "(SELECT COUNT(*) FROM items x WHERE x.world_id = p.id) AS items, "
    "(SELECT COUNT(*) FROM items x WHERE x.world_id = p.id AND x.selected = 1) AS selected"
)

# Per world, over every response of the world: these grow with the responses, so the lists
# show the page first and fill them in afterwards (`world_stats`, run by the table's worker).
# CROSS JOIN fixes the loop order (world's items -> responses -> their rows); the unary `+`
# keeps the planner off the low-selectivity idx_judgments_error / idx_judgments_judge_mode.
_WORLD_STATS = (
    "SELECT "
    "(SELECT COUNT(*) FROM items i CROSS JOIN responses r WHERE i.world_id = :w "
    " AND r.item_id = i.id) AS responses, "
    "(SELECT AVG(j.error) FROM items i CROSS JOIN responses r CROSS JOIN judgments j "
    " WHERE i.world_id = :w AND r.item_id = i.id AND j.response_id = r.id "
    " AND +j.mode = 'contract' AND +j.error IS NOT NULL) AS judge_err"
)

# The label columns start from the labels, not the responses: labels are far fewer (tens of
# thousands against a million responses), and one pass over them serves every world shown,
# where a per-response "has a current label" probe cost a lookup per response per world.
_LABEL_STATS = (
    "SELECT i.world_id AS world_id, COUNT(DISTINCT e.subject) AS labelled, "
    "AVG(json_extract(e.payload, '$.error')) AS human_err "
    "FROM annotations e CROSS JOIN responses r CROSS JOIN items i "
    f"WHERE e.suite = 'copal' AND {CURRENT} AND r.id = e.subject AND i.id = r.item_id "
    "AND i.world_id IN (SELECT value FROM json_each(:ws)) GROUP BY i.world_id"
)


def worlds_page(db: Database, req: PageRequest) -> Page:
    """Worlds (alphabetical) with their counts of policies, clauses, compositions, items."""
    return read_page(
        db, req, table="worlds", keys="id AS _ord, id, name, industry, risk_tier",
        order="id", outer=_WORLD_COUNTS,
        where=where_clause(req, ["id", "name", "industry", "use_case"], WORLD_FILTERS),
    )


def world_stats(db: Database, world_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per world: `responses`; `labelled`, responses with at least one current label;
    `judge_err`, the mean computed error over contract-mode judgments (every judge);
    `human_err`, the mean error of annotators' current labels. Costs a pass over the world's
    responses: call it from a worker, after showing the page."""
    labels = {row["world_id"]: row for row in db.execute(
        _LABEL_STATS, {"ws": dumps(list(world_ids))})}
    out = {}
    for wid in world_ids:
        row = dict(db.execute(_WORLD_STATS, {"w": wid}).fetchone())
        lab = labels.get(wid)
        out[wid] = {"responses": row["responses"],
                    "labelled": lab["labelled"] if lab is not None else 0,
                    "judge_err": row["judge_err"],
                    "human_err": lab["human_err"] if lab is not None else None}
    return out


@dataclass(frozen=True, slots=True)
class WorldCounts:
    """One world with its counts of policies, clauses, compositions, items and selected
    items (the slow per-response columns are `world_stats`)."""

    id: str
    name: str
    industry: str
    risk_tier: str
    policies: int
    clauses: int
    compositions: int
    items: int
    selected: int
    use_case: str | None
    context: str | None


def world_summary(db: Database, world_id: str) -> WorldCounts | None:
    """One world's row with its counts (without `world_stats`)."""
    row = db.execute(
        f"{_WORLD_COUNTS}, w.use_case, w.context FROM (SELECT id, name, industry, risk_tier "
        "FROM worlds WHERE id = ?) p JOIN worlds w ON w.id = p.id", (world_id,)
    ).fetchone()
    return None if row is None else WorldCounts(*row)


# ------------------------------------------------------------------ one world's lists


POLICY_FILTERS: dict[str, Filter] = {"kind": prefix_filter("kind")}


def policies_page(db: Database, world_id: str, req: PageRequest) -> Page:
    return read_page(
        db, req, table="policies", keys="position AS _ord, id, kind, text",
        order="position",
        where=where_clause(req, ["id", "text"], POLICY_FILTERS, ["world_id = ?"], [world_id]),
        outer=("SELECT p.*, (SELECT COUNT(*) FROM clauses c, json_each(c.policy_ids) m "
               " WHERE c.world_id = ? AND m.value = p.id) AS clauses"),
        outer_params=[world_id],
    )


CLAUSE_FILTERS: dict[str, Filter] = {
    "effect": prefix_filter("COALESCE(effect, 'none')"),
    "policy": ("EXISTS (SELECT 1 FROM json_each(policy_ids) WHERE value = ?)", str),
}


def clauses_page(db: Database, world_id: str, req: PageRequest) -> Page:
    return read_page(
        db, req, table="clauses",
        keys="rowid AS _ord, id, policy_ids, trigger, scope, effect, source_span, confidence, "
             "audit_note",
        order="rowid",
        where=where_clause(req, ["id", "trigger", "scope", "source_span", "audit_note"],
                     CLAUSE_FILTERS, ["world_id = ?"], [world_id]),
        outer="SELECT p.*",
    )


COMPOSITION_FILTERS: dict[str, Filter] = {
    "pattern": prefix_filter("pattern"),
    "status": prefix_filter("status"),
    "clause": _suffix_member("clause_ids"),
}


def compositions_page(db: Database, world_id: str, req: PageRequest) -> Page:
    return read_page(
        db, req, table="compositions",
        keys="rowid AS _ord, id, clause_ids, pattern, status, reason",
        order="rowid",
        where=where_clause(req, ["id", "reason", "clause_ids"], COMPOSITION_FILTERS,
                     ["world_id = ?"], [world_id]),
        outer=("SELECT p.*, (SELECT COUNT(*) FROM items i WHERE i.composition_id = p.id "
               "AND i.parent_item_id IS NULL) AS items"),
    )


ITEM_FILTERS: dict[str, Filter] = {
    "pattern": prefix_filter("pattern"),
    "facet": prefix_filter("facet"),
    "method": prefix_filter("method"),
    "selected": ("selected = ?", flag_value),
    "composition": ("composition_id LIKE ? ESCAPE '\\'", lambda v: "%" + like_escape(v)),
    "parent": ("parent_item_id LIKE ? ESCAPE '\\'", lambda v: "%" + like_escape(v)),
    "erred": ("EXISTS (SELECT 1 FROM responses r CROSS JOIN judgments j WHERE r.item_id = "
              "items.id AND j.response_id = r.id AND +j.mode = 'contract' AND +j.error = 1) = ?",
              flag_value),
    "labelled": (f"EXISTS (SELECT 1 FROM responses r WHERE r.item_id = items.id "
                 f"AND {HAS_CURRENT_LABEL}) = ?", flag_value),
}


def items_page(db: Database, world_id: str, req: PageRequest,
               extra: Mapping[str, Filter] | None = None) -> Page:
    """Items with their response count, judge error rate and labelling progress. `extra`:
    filters computed by the caller for this request (copal_tui.services.cases: `disagree:`, `cell:`)."""
    return read_page(
        db, req, table="items",
        keys="rowid AS _ord, id, composition_id, pattern, facet, method, selected, "
             "parent_item_id, query",
        order="rowid",
        where=where_clause(req, ["id", "query"], {**ITEM_FILTERS, **(extra or {})},
                     ["world_id = ?"], [world_id]),
        outer=(
            "SELECT p.*, "
            "(SELECT COUNT(*) FROM responses r WHERE r.item_id = p.id) AS responses, "
            "(SELECT COUNT(*) FROM responses r WHERE r.item_id = p.id "
            f" AND {HAS_CURRENT_LABEL}) AS labelled, "
            "(SELECT AVG(j.error) FROM responses r CROSS JOIN judgments j "
            " WHERE r.item_id = p.id AND j.response_id = r.id AND +j.mode = 'contract' "
            " AND +j.error IS NOT NULL) AS judge_err"
        ),
    )


RUN_FILTERS: dict[str, Filter] = {"stage": prefix_filter("stage"), "status": prefix_filter("status")}


def runs_page(db: Database, world_id: str | None, req: PageRequest) -> Page:
    """Runs, newest first; for a world, the runs whose options named it or named every world."""
    base: list[str] = []
    params: list[object] = []
    if world_id is not None:
        base.append("(json_extract(manifest, '$.options.worlds') IS NULL OR EXISTS (SELECT 1 "
                    "FROM json_each(manifest, '$.options.worlds') WHERE value = ?))")
        params.append(world_id)
    return read_page(
        db, req, table="runs",
        keys="started_at AS _ord, id, stage, status, started_at, finished_at, calls, "
             "cache_hits, failures, cost",
        order="started_at DESC, id DESC",
        where=where_clause(req, ["id", "stage", "status"], RUN_FILTERS, base, params),
        outer="SELECT p.*", final="p._ord DESC, p.id DESC",
    )


def run_manifest(db: Database, run_id: str) -> RunRecord | None:
    """One run with its manifest decoded."""
    row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else RunRecord.from_row(row)
