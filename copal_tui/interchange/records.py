"""Conversion between stored rows (the store's typed rows) and interchange records (dicts in
the public field order).

The exporter writes these dicts; the importer compares an incoming record with the stored one
through the same function, so "identical" means identical as exported.
"""

from __future__ import annotations

from typing import Any

from store.annotation import annotations as log
from store.annotation.annotations import Annotation
from store.artifacts import compass_interchange as compass_io
from store.artifacts import reads
from store.artifacts.records import (
    CompassJudgmentRow,
    CompassQueryRow,
    CompassResponseRow,
    JudgmentRow,
    ResponseRow,
)
from store.db import Database, loads
from store.pipeline.rows import (
    ClauseRow,
    CompositionRow,
    ItemRow,
    PolicyRow,
    WorldRow,
    contract_view,
)


def world_record(row: WorldRow) -> dict[str, Any]:
    out = {
        "type": "world",
        "id": row.id,
        "name": row.name,
        "industry": row.industry,
        "use_case": row.use_case,
        "risk_tier": row.risk_tier,
        "context": row.context,
    }
    # Only COMPASS worlds have one; leaving the key out otherwise keeps every other export
    # byte-identical to what earlier versions wrote.
    if row.system_prompt is not None:
        out["system_prompt"] = row.system_prompt
    return out


def policy_record(world_id: str, row: PolicyRow) -> dict[str, Any]:
    return {
        "type": "policy",
        "id": row.id,
        "world_id": world_id,
        "kind": row.kind,
        "text": row.text,
    }


def clause_record(row: ClauseRow) -> dict[str, Any]:
    return {
        "type": "clause",
        "id": row.id,
        "world_id": row.world_id,
        "policy_ids": list(row.policy_ids),
        "trigger": row.trigger,
        "scope": row.scope,
        "effect": row.effect,
        "source_span": row.source_span,
        "confidence": row.confidence,
        "audit_note": row.audit_note,
    }


def composition_record(row: CompositionRow) -> dict[str, Any]:
    return {
        "type": "composition",
        "id": row.id,
        "world_id": row.world_id,
        "clause_ids": list(row.clause_ids),
        "pattern": row.pattern,
        "status": row.status,
        "reason": row.reason,
    }


def item_record(row: ItemRow) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "item",
        "id": row.id,
        "world_id": row.world_id,
        "composition_id": row.composition_id,
        "pattern": row.pattern,
        "facet": row.facet,
        "query": row.query,
        "required": contract_view(row.required),
        "forbidden": contract_view(row.forbidden),
        "method": row.method,
        "parent_item_id": row.parent_item_id,
        "selected": bool(row.selected),
        "trap": row.trap,
    }
    # Only when there is one: hand-made items have none, and their records stay as they were.
    if row.screening is not None:
        record["screening"] = row.screening
    return record


def response_record(row: ResponseRow) -> dict[str, Any]:
    return {
        "type": "response",
        "id": row.id,
        "item_id": row.item_id,
        "model": row.model,
        "text": row.text,
        "variant": row.variant,
    }


def judgment_record(row: JudgmentRow) -> dict[str, Any]:
    return {
        "type": "judgment",
        "id": row.id,
        "response_id": row.response_id,
        "judge": row.judge,
        "mode": row.mode,
        "observed": None if row.observed is None else list(row.observed),
        "error": row.error,
        "facet": row.facet,
        "rationale": row.rationale,
        "evidence": row.evidence,
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
        "allowlist_policy_id": row.allowlist_policy_id,
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
    for world in reads.iter_worlds(db):
        yield world_record(world)
    for world_id, policy in reads.iter_policies(db):
        yield policy_record(world_id, policy)
    for clause in reads.iter_clauses(db):
        yield clause_record(clause)
    for composition in reads.iter_compositions(db):
        yield composition_record(composition)
    # Parents before projections so a re-import resolves parent_item_id in one pass.
    for item in reads.iter_items(db, projections=False):
        yield item_record(item)
    for item in reads.iter_items(db, projections=True):
        yield item_record(item)
    # Failed calls have no text or marks; they are pipeline state, not results.
    for response in reads.iter_answered_responses(db):
        yield response_record(response)
    for judgment in reads.iter_scored_judgments(db):
        yield judgment_record(judgment)
    for event in log.iter_current(db, "copal"):
        yield label_record(event)
    for event in log.iter_current(db, "copal", log.ADJUDICATOR):
        yield adjudication_record(event)
    for compass_query in compass_io.iter_queries(db):
        yield compass_query_record(compass_query)
    for compass_response in compass_io.iter_responses(db):
        yield compass_response_record(compass_response)
    for compass_judgment in compass_io.iter_judgments(db):
        yield compass_judgment_record(compass_judgment)


def _list(value: Any) -> list[Any]:
    return list(loads(value) if isinstance(value, str) else value)  # type: ignore[arg-type]


def _maybe_list(value: Any) -> list[Any] | None:
    return None if value is None else _list(value)


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _maybe(value: Any) -> Any:
    return loads(value) if isinstance(value, str) else value


def norm(d: dict[str, Any]) -> dict[str, Any]:
    """The record without its null fields (a null and a missing field say the same)."""
    return {k: v for k, v in d.items() if v is not None}


def same(stored: dict[str, Any], incoming: dict[str, Any]) -> bool:
    """Whether an incoming record says what the stored one (as exported) says."""
    kept = norm(stored)
    return all(kept.get(k) == incoming.get(k) for k in kept.keys() | norm(incoming).keys())
