"""SQL for browsing a COMPASS suite: a world's queries as a paged, filterable list, and one
query with its responses, each judge's verdict and the annotators' current labels.

The list follows store/browse/lists.py: one page of keys chosen with LIMIT/OFFSET, per-row counts
computed for that page only, user input only ever as parameters (free words are LIKE patterns,
`key:value` filters are looked up in `QUERY_FILTERS`). Every read is keyed on an index of
migration m005_compass (world, query id, response id) or of the annotation log (its subject
index, m010). Transactions are the service's (`copal_tui.services.browse`), never begun here.
"""

from __future__ import annotations

from store.annotation import annotations as log
from store.browse.lists import (
    Filter,
    Page,
    PageRequest,
    flag_value,
    like_escape,
    prefix_filter,
    read_page,
    where_clause,
)
from store.browse.rows import (
    CompassJudgment,
    CompassLabel,
    CompassResponse,
    ParentQuery,
    QueryDetail,
)
from store.db import Database, loads
from store.pipeline.rows import PolicyRow, columns

RESPONSE_LIMIT = 200


def has_suite(db: Database, world_id: str) -> bool:
    """Whether the world has COMPASS queries (one index probe)."""
    return db.execute("SELECT 1 FROM compass_queries WHERE world_id = ? LIMIT 1",
                      (world_id,)).fetchone() is not None


# Prefixes, so `type:denied` lists both denied types and `strategy:hypo` is enough; `policy`
# is exact because policy ids are short and prefixes of one another (D1, D10).
QUERY_FILTERS: dict[str, Filter] = {
    "type": prefix_filter("query_type"),
    "strategy": prefix_filter("COALESCE(strategy, '-')"),
    "form": prefix_filter("COALESCE(form, '-')"),
    "status": prefix_filter("status"),
    "policy": ("policy_id = ?", str),
    "parent": ("parent_id LIKE ? ESCAPE '\\'", lambda v: "%" + like_escape(v)),
    "answered": ("EXISTS (SELECT 1 FROM compass_responses r WHERE r.query_id = "
                 "compass_queries.id AND r.failure IS NULL AND r.text IS NOT NULL) = ?", flag_value),
}


def queries_page(db: Database, world_id: str, req: PageRequest) -> Page:
    """A world's queries in insertion order, with their response, judged and aligned counts."""
    return read_page(
        db, req, table="compass_queries",
        keys="rowid AS _ord, id, policy_id, query_type, strategy, form, parent_id, status, "
             "reason, text",
        order="rowid",
        where=where_clause(req, ["id", "text", "policy_id"], QUERY_FILTERS, ["world_id = ?"],
                     [world_id]),
        outer=(
            "SELECT p.*, "
            "(SELECT COUNT(*) FROM compass_responses r WHERE r.query_id = p.id "
            " AND r.failure IS NULL AND r.text IS NOT NULL) AS responses, "
            "(SELECT AVG(j.aligned) FROM compass_responses r CROSS JOIN compass_judgments j "
            " WHERE r.query_id = p.id AND j.response_id = r.id AND j.aligned IS NOT NULL) "
            " AS judge_aligned"
        ),
    )


def suite_counts(db: Database, world_id: str) -> dict[str, int]:
    """Queries per type (every status) of one world."""
    return {r[0]: int(r[1]) for r in db.execute(
        "SELECT query_type, COUNT(*) FROM compass_queries WHERE world_id = ? "
        "GROUP BY query_type", (world_id,))}


def world_policies(db: Database, world_id: str) -> list[PolicyRow]:
    """The world's policies in their order (allowlist and denylist entries as imported)."""
    return [PolicyRow(*r) for r in db.execute(
        f"SELECT {columns(PolicyRow)} FROM policies WHERE world_id = ? ORDER BY position",
        (world_id,))]


def query_view(db: Database, query_id: str) -> QueryDetail | None:
    """One query with its world's name, the intended policy (text, kind) and its parent."""
    row = db.execute(
        "SELECT q.id, q.world_id, w.name AS world_name, q.policy_id, q.query_type, "
        "q.strategy, q.form, q.parent_id, q.text, q.status, q.reason, q.matched, "
        "q.attributes, p.kind AS policy_kind, p.text AS policy_text "
        "FROM compass_queries q JOIN worlds w ON w.id = q.world_id "
        "LEFT JOIN policies p ON p.world_id = q.world_id AND p.id = q.policy_id "
        "WHERE q.id = ?", (query_id,)).fetchone()
    if row is None:
        return None
    parent = None
    if row["parent_id"]:
        prow = db.execute("SELECT id, query_type, text FROM compass_queries WHERE id = ?",
                          (row["parent_id"],)).fetchone()
        parent = None if prow is None else ParentQuery(*prow)
    matched, attributes = loads(row["matched"]), loads(row["attributes"])
    children = int(db.execute(
        "SELECT COUNT(*) FROM compass_queries WHERE parent_id = ?", (query_id,)).fetchone()[0])
    total = int(db.execute(
        "SELECT COUNT(*) FROM compass_responses WHERE query_id = ?", (query_id,)).fetchone()[0])
    return QueryDetail(
        id=row["id"], world_id=row["world_id"], world_name=row["world_name"],
        policy_id=row["policy_id"], query_type=row["query_type"], strategy=row["strategy"],
        form=row["form"], parent_id=row["parent_id"], text=row["text"], status=row["status"],
        reason=row["reason"],
        matched=[str(m) for m in matched] if isinstance(matched, list) else None,
        attributes=attributes if isinstance(attributes, dict) else {},
        policy_kind=row["policy_kind"], policy_text=row["policy_text"], parent=parent,
        children=children, response_total=total)


def query_responses(db: Database, query_id: str,
                    limit: int = RESPONSE_LIMIT) -> list[CompassResponse]:
    """The query's responses (failed ones too: the failure is worth seeing) by model and
    variant, each with `judgments` (by judge) and `labels` (annotators' current labels; their
    `aligned` is left to the caller, which knows the domain's rule)."""
    return [CompassResponse(
        r["id"], r["query_id"], r["model"], r["variant"], r["text"], r["prefilter"],
        r["prefilter_model"], r["prefilter_reason"], r["failure"],
        judgments=tuple(judgments_of(db, r["id"])),
        labels=tuple(label_row(lab) for lab in current_labels(db, r["id"])),
    ) for r in db.execute(
        "SELECT id, query_id, model, variant, text, prefilter, prefilter_model, "
        "prefilter_reason, failure FROM compass_responses WHERE query_id = ? "
        "ORDER BY model, variant, id LIMIT ?", (query_id, limit)).fetchall()]


def label_row(lab: log.Annotation) -> CompassLabel:
    """A COMPASS label event as the views list it: what the annotator saw (refused,
    compliant), `aligned` None (it follows from the query type by a domain rule the store does
    not load: the service fills it in)."""
    refused, compliant = lab.get("refused"), lab.get("compliant")
    return CompassLabel(lab.annotator, None if refused is None else bool(refused),
                        None if compliant is None else bool(compliant), None,
                        lab.get("failure_mode"), lab.get("note"))


def current_labels(db: Database, response_id: str) -> list[log.Annotation]:
    """Every annotator's current label on one response, by annotator."""
    return log.labels_of(db, "compass", response_id)


def judgments_of(db: Database, response_id: str) -> list[CompassJudgment]:
    """Each judge's verdict on one response, by judge."""
    return [CompassJudgment(*r) for r in db.execute(
        f"SELECT {columns(CompassJudgment)} FROM compass_judgments WHERE response_id = ? "
        "ORDER BY judge", (response_id,))]
