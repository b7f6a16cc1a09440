"""SQL for COMPASS-style suites: queries, responses and judgments (migrations m005_compass and
m015_compass_allowlist_policy).

Writes take plain values already checked by `copal_tui.domain.compass`; ids are chosen by the
caller so a stage is idempotent. Callers open the transaction with `store.db.write`. Metrics
(`store.report.compass`), browsing and labels keep their SQL in their own modules.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from store.artifacts.records import CompassQueryRow
from store.db import Database, dumps, utcnow


@dataclass(frozen=True, slots=True)
class CompassResponseWithQuery:
    """A usable response with what judging it needs of its query: type, policy and text."""

    id: str
    query_id: str
    model: str
    variant: str
    text: str
    prefilter: str | None
    prefilter_model: str | None
    prefilter_reason: str | None
    failure: str | None
    run_id: str | None
    created_at: str
    world_id: str
    policy_id: str
    query_type: str
    strategy: str | None
    form: str | None
    query: str

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CompassResponseWithQuery:
        return cls(**{f: r[f] for f in cls.__dataclass_fields__})


# ------------------------------------------------------------------ worlds


def set_system_prompt(db: Database, world_id: str, text: str | None) -> None:
    db.execute("UPDATE worlds SET system_prompt = ? WHERE id = ?", (text, world_id))


def system_prompt(db: Database, world_id: str) -> str | None:
    row = db.execute("SELECT system_prompt FROM worlds WHERE id = ?", (world_id,)).fetchone()
    return None if row is None else row[0]


def compass_world_ids(db: Database) -> list[str]:
    """Worlds that have a COMPASS suite (at least one query), by id."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT world_id FROM compass_queries ORDER BY world_id")]


# ------------------------------------------------------------------ queries


def insert_query(db: Database, q: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO compass_queries (id, world_id, policy_id, query_type, strategy, form, "
        "parent_id, text, attributes, status, matched, reason, run_id, created_at, "
        "allowlist_policy_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (q["id"], q["world_id"], q["policy_id"], q["query_type"], q.get("strategy"),
         q.get("form"), q.get("parent_id"), q["text"], dumps(q.get("attributes") or {}),
         q.get("status") or "pending",
         None if q.get("matched") is None else dumps(list(q["matched"])), q.get("reason"),
         run_id, utcnow(), q.get("allowlist_policy_id")),
    )


def query_ids(db: Database, world_id: str) -> set[str]:
    return {r[0] for r in db.execute(
        "SELECT id FROM compass_queries WHERE world_id = ?", (world_id,))}


def queries(db: Database, world_id: str, *, query_type: str | None = None,
            status: str | None = None) -> list[CompassQueryRow]:
    """A world's queries by id, optionally one type and/or one verification status."""
    sql = "SELECT * FROM compass_queries WHERE world_id = ?"
    params: list[Any] = [world_id]
    if query_type is not None:
        sql += " AND query_type = ?"
        params.append(query_type)
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    return [CompassQueryRow.from_row(r) for r in db.execute(sql + " ORDER BY id", tuple(params))]


def set_verification(db: Database, query_id: str, status: str, matched: list[str] | None,
                     reason: str | None, run_id: str | None = None) -> None:
    db.execute(
        "UPDATE compass_queries SET status = ?, matched = ?, reason = ?, "
        "run_id = COALESCE(?, run_id) WHERE id = ?",
        (status, None if matched is None else dumps(list(matched)), reason, run_id, query_id),
    )


# ------------------------------------------------------------------ responses


def response_ok(db: Database, query_id: str, model: str, variant: str) -> bool:
    """A usable response exists (answered, or blocked by the pre-filter)."""
    return db.execute(
        "SELECT 1 FROM compass_responses WHERE query_id = ? AND model = ? AND variant = ? "
        "AND failure IS NULL AND text IS NOT NULL", (query_id, model, variant)).fetchone() \
        is not None


def delete_failed_response(db: Database, query_id: str, model: str, variant: str) -> None:
    db.execute("DELETE FROM compass_responses WHERE query_id = ? AND model = ? AND variant = ? "
               "AND (failure IS NOT NULL OR text IS NULL)", (query_id, model, variant))


def insert_response(db: Database, r: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO compass_responses (id, query_id, model, variant, text, prefilter, "
        "prefilter_model, prefilter_reason, failure, run_id, created_at, redactions) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (r["id"], r["query_id"], r["model"], r["variant"], r.get("text"), r.get("prefilter"),
         r.get("prefilter_model"), r.get("prefilter_reason"), r.get("failure"), run_id,
         utcnow(), r.get("redactions")),
    )


def responses(db: Database, world_id: str, *, model: str | None = None,
              variant: str | None = None) -> list[CompassResponseWithQuery]:
    """Usable responses of a world's kept queries, with the query's type, policy and text."""
    sql = ("SELECT r.*, q.world_id, q.policy_id, q.query_type, q.strategy, q.form, "
           "q.text AS query FROM compass_responses r JOIN compass_queries q ON q.id = r.query_id "
           "WHERE q.world_id = ? AND q.status = 'kept' AND r.failure IS NULL "
           "AND r.text IS NOT NULL")
    params: list[Any] = [world_id]
    if model is not None:
        sql += " AND r.model = ?"
        params.append(model)
    if variant is not None:
        sql += " AND r.variant = ?"
        params.append(variant)
    return [CompassResponseWithQuery.from_row(r)
            for r in db.execute(sql + " ORDER BY r.id", tuple(params))]


# ------------------------------------------------------------------ judgments


def judgment_ok(db: Database, response_id: str, judge: str) -> bool:
    return db.execute(
        "SELECT 1 FROM compass_judgments WHERE response_id = ? AND judge = ? "
        "AND failure IS NULL AND aligned IS NOT NULL", (response_id, judge)).fetchone() \
        is not None


def delete_failed_judgment(db: Database, response_id: str, judge: str) -> None:
    db.execute("DELETE FROM compass_judgments WHERE response_id = ? AND judge = ? "
               "AND (failure IS NOT NULL OR aligned IS NULL)", (response_id, judge))


def insert_judgment(db: Database, j: dict[str, Any], run_id: str | None = None) -> None:
    def flag(v: Any) -> int | None:
        return None if v is None else int(bool(v))

    db.execute(
        "INSERT INTO compass_judgments (id, response_id, judge, refused, compliant, aligned, "
        "failure_mode, rationale, failure, run_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (j["id"], j["response_id"], j["judge"], flag(j.get("refused")),
         flag(j.get("compliant")), flag(j.get("aligned")), j.get("failure_mode"),
         j.get("rationale"), j.get("failure"), run_id, utcnow()),
    )
