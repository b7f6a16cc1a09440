"""Conversion between stored rows and interchange records (dicts in the public field order).

The exporter writes these dicts; the importer compares an incoming record with the stored one
through the same function, so "identical" means identical as exported.
"""

from __future__ import annotations

from typing import Any

from store.annotation import annotations as log
from store.annotation.annotations import Annotation
from store.artifacts import compass_interchange_sql as compass_io
from store.artifacts import reads
from store.artifacts.records import CompassJudgmentRow, CompassQueryRow, CompassResponseRow
from store.db import Database, loads


def world_record(row: dict[str, Any]) -> dict[str, Any]:
    out = {
        "type": "world",
        "id": row["id"],
        "name": row["name"],
        "industry": row["industry"],
        "use_case": row["use_case"],
        "risk_tier": row["risk_tier"],
        "context": row["context"],
    }
    # Only COMPASS worlds have one; leaving the key out otherwise keeps every other export
    # byte-identical to what earlier versions wrote.
    if row.get("system_prompt") is not None:
        out["system_prompt"] = row["system_prompt"]
    return out


def policy_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "policy",
        "id": row["id"],
        "world_id": row["world_id"],
        "kind": row["kind"],
        "text": row["text"],
    }


def clause_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "clause",
        "id": row["id"],
        "world_id": row["world_id"],
        "policy_ids": _list(row["policy_ids"]),
        "trigger": row["trigger"],
        "scope": row["scope"],
        "effect": row["effect"],
        "source_span": row["source_span"],
        "confidence": row.get("confidence"),
        "audit_note": row.get("audit_note"),
    }


def composition_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "composition",
        "id": row["id"],
        "world_id": row["world_id"],
        "clause_ids": _list(row["clause_ids"]),
        "pattern": row["pattern"],
        "status": row["status"],
        "reason": row.get("reason"),
    }


def item_record(row: dict[str, Any]) -> dict[str, Any]:
    screening = _maybe(row.get("screening"))
    record = {
        "type": "item",
        "id": row["id"],
        "world_id": row["world_id"],
        "composition_id": row["composition_id"],
        "pattern": row["pattern"],
        "facet": row["facet"],
        "query": row["query"],
        "required": _contract(row["required"]),
        "forbidden": _contract(row["forbidden"]),
        "method": row["method"],
        "parent_item_id": row["parent_item_id"],
        "selected": bool(row["selected"]),
        "trap": row.get("trap"),
    }
    # Only when there is one: hand-made items have none, and their records stay as they were.
    if screening is not None:
        record["screening"] = screening
    return record


def response_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "response",
        "id": row["id"],
        "item_id": row["item_id"],
        "model": row["model"],
        "text": row["text"],
        "variant": row["variant"],
    }


def judgment_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "judgment",
        "id": row["id"],
        "response_id": row["response_id"],
        "judge": row["judge"],
        "mode": row["mode"],
        "observed": _maybe_list(row["observed"]),
        "error": row["error"],
        "facet": row["facet"],
        "rationale": row["rationale"],
        "evidence": _maybe(row.get("evidence")),
    }


def label_record(row: Annotation) -> dict[str, Any]:
    return {
        "type": "label",
        "response_id": row.subject,
        "annotator": row.annotator,
        "observed": _maybe_list(row.get("observed")),
        "error": row.get("error"),
        "facet": row.get("facet"),
        "note": row.get("note"),
        "created_at": row.created_at,
    }


def adjudication_record(row: Annotation) -> dict[str, Any]:
    return {
        "type": "adjudication",
        "response_id": row.subject,
        "adjudicator": row.annotator,
        "observed": _maybe_list(row.get("observed")),
        "error": row.get("error"),
        "facet": row.get("facet"),
        "note": row.get("note"),
        "created_at": row.created_at,
    }


def compass_query_record(row: CompassQueryRow) -> dict[str, Any]:
    return {
        "type": "compass_query",
        "id": row.id,
        "world_id": row.world_id,
        "policy_id": row.policy_id,
        "query_type": row.query_type,
        "strategy": row.strategy,
        "form": row.form,
        "parent_id": row.parent_id,
        "text": row.text,
        "attributes": _maybe(row.attributes) or {},
        "status": row.status,
        "matched": _maybe_list(row.matched),
        "reason": row.reason,
    }


def compass_response_record(row: CompassResponseRow) -> dict[str, Any]:
    return {
        "type": "compass_response",
        "id": row.id,
        "query_id": row.query_id,
        "model": row.model,
        "variant": row.variant,
        "text": row.text,
        "prefilter": row.prefilter,
        "prefilter_model": row.prefilter_model,
        "prefilter_reason": row.prefilter_reason,
    }


def compass_judgment_record(row: CompassJudgmentRow) -> dict[str, Any]:
    return {
        "type": "compass_judgment",
        "id": row.id,
        "response_id": row.response_id,
        "judge": row.judge,
        "refused": _flag(row.refused),
        "compliant": _flag(row.compliant),
        "aligned": _flag(row.aligned),
        "failure_mode": row.failure_mode,
        "rationale": row.rationale,
    }


def iter_records(db: Database) -> Any:
    """Every exportable record, referents before referrers, each type in key order."""
    for row in reads.iter_table(db, "worlds"):
        yield world_record(row)
    for row in reads.iter_table(db, "policies"):
        yield policy_record(row)
    for row in reads.iter_table(db, "clauses"):
        yield clause_record(row)
    for row in reads.iter_table(db, "compositions"):
        yield composition_record(row)
    # Parents before projections so a re-import resolves parent_item_id in one pass.
    for row in reads.iter_table(db, "items", "WHERE parent_item_id IS NULL"):
        yield item_record(row)
    for row in reads.iter_table(db, "items", "WHERE parent_item_id IS NOT NULL"):
        yield item_record(row)
    # Failed calls have no text or marks; they are pipeline state, not results.
    for row in reads.iter_table(db, "responses", "WHERE failure IS NULL AND text IS NOT NULL"):
        yield response_record(row)
    for row in reads.iter_table(db, "judgments", "WHERE failure IS NULL AND error IS NOT NULL"):
        yield judgment_record(row)
    for event in log.iter_current(db, "copal"):
        yield label_record(event)
    for event in log.iter_current(db, "copal", log.ADJUDICATOR):
        yield adjudication_record(event)
    for query in compass_io.iter_queries(db):
        yield compass_query_record(query)
    for response in compass_io.iter_responses(db):
        yield compass_response_record(response)
    for judgment in compass_io.iter_judgments(db):
        yield compass_judgment_record(judgment)


def _list(value: Any) -> list[Any]:
    return list(loads(value) if isinstance(value, str) else value)  # type: ignore[arg-type]


def _maybe_list(value: Any) -> list[Any] | None:
    return None if value is None else _list(value)


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _maybe(value: Any) -> Any:
    return loads(value) if isinstance(value, str) else value


def _contract(value: Any) -> list[dict[str, Any]]:
    items = _list(value)
    return [
        {"id": c["id"], "text": c["text"], "kind": c.get("kind", "content"),
         "clause_id": c.get("clause_id")}
        for c in items
    ]


def norm(d: dict[str, Any]) -> dict[str, Any]:
    """The record without its null fields (a null and a missing field say the same)."""
    return {k: v for k, v in d.items() if v is not None}


def same(stored: dict[str, Any], incoming: dict[str, Any]) -> bool:
    """Whether an incoming record says what the stored one (as exported) says."""
    kept = norm(stored)
    return all(kept.get(k) == incoming.get(k) for k in kept.keys() | norm(incoming).keys())
