"""Typed inserts for every stored artifact. Callers open the transaction with `store.db.write`.

Functions take plain values (already validated by the domain layer) and return nothing; ids are
chosen by the caller so stages stay idempotent (the same input always maps to the same id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.db import Database, dumps, utcnow


def insert_world(db: Database, w: dict[str, Any], source_path: str | None = None) -> None:
    db.execute(
        "INSERT INTO worlds (id, name, industry, use_case, risk_tier, context, source_path, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (w["id"], w["name"], w["industry"], w["use_case"], w["risk_tier"], w["context"],
         source_path, utcnow()),
    )


def next_policy_position(db: Database, world_id: str) -> int:
    """The position after the world's last policy (1 for a world without policies)."""
    # No index covers (world_id, position): this scans the world's policies, so callers adding
    # many policies ask once and count on (a query per row made imports quadratic).
    return int(db.execute(
        "SELECT COALESCE(MAX(position), 0) + 1 FROM policies WHERE world_id = ?", (world_id,)
    ).fetchone()[0])


def insert_policy(db: Database, world_id: str, p: dict[str, Any],
                  position: int | None = None) -> None:
    """One policy, at `position` (default: after the world's last one)."""
    if position is None:
        position = next_policy_position(db, world_id)
    db.execute(
        "INSERT INTO policies (world_id, id, kind, text, position) VALUES (?, ?, ?, ?, ?)",
        (world_id, p["id"], p["kind"], p["text"], position),
    )


def insert_policies(db: Database, world_id: str, policies: Sequence[dict[str, Any]]) -> None:
    """A world's policies in order, after any it has: one position query, one executemany."""
    start = next_policy_position(db, world_id)
    db.conn.executemany(
        "INSERT INTO policies (world_id, id, kind, text, position) VALUES (?, ?, ?, ?, ?)",
        [(world_id, p["id"], p["kind"], p["text"], start + i) for i, p in enumerate(policies)],
    )


def insert_clause(db: Database, c: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO clauses (id, world_id, policy_ids, trigger, scope, effect, source_span, "
        "confidence, audit_note, run_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (c["id"], c["world_id"], dumps(list(c["policy_ids"])), c["trigger"], c["scope"],
         c.get("effect"), c["source_span"], c.get("confidence"), c.get("audit_note"), run_id,
         utcnow()),
    )


def insert_composition(db: Database, c: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO compositions (id, world_id, clause_ids, pattern, status, reason, run_id, "
        "created_at) VALUES (?,?,?,?,?,?,?,?)",
        (c["id"], c["world_id"], dumps(list(c["clause_ids"])), c["pattern"],
         c.get("status") or "confirmed", c.get("reason"), run_id, utcnow()),
    )


def insert_item(db: Database, it: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO items (id, world_id, composition_id, pattern, facet, query, required, "
        "forbidden, method, parent_item_id, selected, trap, screening, run_id, created_at, "
        "gate, route) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (it["id"], it["world_id"], it.get("composition_id"), it.get("pattern"), it.get("facet"),
         it["query"], dumps(list(it["required"])), dumps(list(it["forbidden"])), it["method"],
         it.get("parent_item_id"), int(bool(it.get("selected"))), it.get("trap"),
         None if it.get("screening") is None else dumps(it["screening"]), run_id, utcnow(),
         it.get("gate"), it.get("route")),
    )


def insert_response(db: Database, r: dict[str, Any], run_id: str | None = None) -> None:
    db.execute(
        "INSERT INTO responses (id, item_id, model, variant, text, failure, run_id, created_at) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (r["id"], r["item_id"], r["model"], r.get("variant") or "base", r.get("text"),
         r.get("failure"), run_id, utcnow()),
    )


def insert_judgment(db: Database, j: dict[str, Any], run_id: str | None = None) -> None:
    observed = j.get("observed")
    db.execute(
        "INSERT INTO judgments (id, response_id, judge, mode, observed, error, direction, "
        "evidence, facet, rationale, failure, run_id, created_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (j["id"], j["response_id"], j["judge"], j["mode"],
         None if observed is None else dumps(list(observed)), j.get("error"), j.get("direction"),
         None if j.get("evidence") is None else dumps(j["evidence"]), j.get("facet"),
         j.get("rationale"), j.get("failure"), run_id, utcnow()),
    )
