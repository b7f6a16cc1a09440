"""Hand-written checks of the record types that make up most of a large interchange file
(responses, judgments, and the items they answer), for the import's hot path.

Each check either returns the record as the schema's model would dump it (defaults filled in)
or None, meaning "not sure": the caller then validates through the pydantic schema
(`copal_tui.domain.schema`), which accepts or words the error. So a check may be stricter than
the schema (exact JSON types only: no coercion of `true` to 1, say) but never looser; every
condition below is one the schema states. Both run for hundreds of thousands of records, where
building and dumping a model per record cost more than reading it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from copal_tui.domain.taxonomy import ContractKind, Facet, JudgeMode, Method, Pattern

# The schema's `Id`: what its pattern and max_length allow.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]*")
_ID_MAX = 200
_MODES = frozenset(m.value for m in JudgeMode)
_FACETS = frozenset(f.value for f in Facet)
_PATTERNS = frozenset(p.value for p in Pattern)
_METHODS = frozenset(m.value for m in Method)
_KINDS = frozenset(k.value for k in ContractKind)

_RESPONSE_KEYS = frozenset({"type", "id", "item_id", "model", "text", "variant"})
_JUDGMENT_KEYS = frozenset({"type", "id", "response_id", "judge", "mode", "observed", "error",
                            "facet", "rationale", "evidence"})
_JUDGMENT_OPTIONAL = ("observed", "error", "facet", "rationale", "evidence")


def _is_id(v: object) -> bool:
    return type(v) is str and len(v) <= _ID_MAX and _ID.fullmatch(v) is not None


# Ids that come back record after record (a response's id in each of its judgments, contract
# item ids in marks) are checked once; the set starts over when full, so it stays bounded.
_KNOWN: set[str] = set()
_KNOWN_MAX = 100_000


def _known_id(v: object) -> bool:
    if type(v) is not str:
        return False
    if v in _KNOWN:
        return True
    if len(v) > _ID_MAX or _ID.fullmatch(v) is None:
        return False
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN.add(v)
    return True


def response(o: dict[str, Any]) -> dict[str, Any] | None:
    if not o.keys() <= _RESPONSE_KEYS:
        return None
    rid, item, model, text = o.get("id"), o.get("item_id"), o.get("model"), o.get("text")
    variant = o.get("variant", "base")
    if not (_is_id(rid) and _known_id(item) and type(model) is str and model
            and type(text) is str and type(variant) is str):
        return None
    o.setdefault("variant", variant)
    return o


def judgment(o: dict[str, Any]) -> dict[str, Any] | None:
    if not o.keys() <= _JUDGMENT_KEYS:
        return None
    jid, rid, judge, mode = o.get("id"), o.get("response_id"), o.get("judge"), o.get("mode")
    observed, error, facet = o.get("observed"), o.get("error"), o.get("facet")
    rationale, evidence = o.get("rationale"), o.get("evidence")
    if not (_is_id(jid) and _known_id(rid) and type(judge) is str and judge
            and type(mode) is str and mode in _MODES):
        return None
    if observed is None:
        if error is None:
            return None
    elif (type(observed) is not list or not all(map(_known_id, observed))
          or len(set(observed)) != len(observed)):
        return None
    if error is not None and (type(error) is not int or error not in (0, 1)):
        return None
    if facet is not None and (type(facet) is not str or facet not in _FACETS):
        return None
    if rationale is not None and type(rationale) is not str:
        return None
    if evidence is not None and (type(evidence) is not dict or not all(
            type(k) is str and type(v) is str for k, v in evidence.items())):
        return None
    # The record itself, completed with the schema's defaults (no new dict per record).
    if len(o) != len(_JUDGMENT_KEYS):
        for key in _JUDGMENT_OPTIONAL:
            o.setdefault(key, None)
    return o


# An item's fields as the schema dumps them, in its order; all but the last two are required.
_ITEM_FIELDS = ("type", "id", "world_id", "composition_id", "pattern", "facet", "query",
                "required", "forbidden", "method", "parent_item_id", "selected", "trap",
                "screening")
_ITEM_REQUIRED = frozenset(_ITEM_FIELDS[:-2])
_ITEM_FIELDS_SET = frozenset(_ITEM_FIELDS)
_CONTRACT_KEYS = frozenset({"id", "text", "kind", "clause_id"})


def _contract(items: object, ids: set[str]) -> list[dict[str, Any]] | None:
    """One side of an item's contract as the schema dumps it (defaults filled in, in field
    order), adding its ids to `ids`; None on any doubt, a repeated id included."""
    if type(items) is not list:
        return None
    out = []
    for c in items:
        if type(c) is not dict or not c.keys() <= _CONTRACT_KEYS:
            return None
        cid, text = c.get("id"), c.get("text")
        kind, clause = c.get("kind", "content"), c.get("clause_id")
        if not (_is_id(cid) and type(text) is str and text and type(kind) is str
                and kind in _KINDS and (clause is None or _known_id(clause))) or cid in ids:
            return None
        ids.add(str(cid))
        out.append({"id": cid, "text": text, "kind": kind, "clause_id": clause})
    return out


def item(o: dict[str, Any]) -> dict[str, Any] | None:
    keys = o.keys()
    if not (keys >= _ITEM_REQUIRED and keys <= _ITEM_FIELDS_SET and o["type"] == "item"):
        return None
    # A screening is free-form JSON, left to the schema.
    if o.get("screening") is not None:
        return None
    pattern, facet, query, trap = o["pattern"], o["facet"], o["query"], o.get("trap")
    if not (_is_id(o["id"]) and _known_id(o["world_id"])
            and (o["composition_id"] is None or _known_id(o["composition_id"]))
            and (pattern is None or (type(pattern) is str and pattern in _PATTERNS))
            and (facet is None or (type(facet) is str and facet in _FACETS))
            and type(query) is str and query
            and type(o["method"]) is str and o["method"] in _METHODS
            and (o["parent_item_id"] is None or _is_id(o["parent_item_id"]))
            and type(o["selected"]) is bool and (trap is None or type(trap) is str)):
        return None
    ids: set[str] = set()
    required, forbidden = _contract(o["required"], ids), _contract(o["forbidden"], ids)
    if required is None or forbidden is None or not ids:
        return None
    out = {k: o.get(k) for k in _ITEM_FIELDS}
    out["required"], out["forbidden"] = required, forbidden
    return out


FAST_CHECKS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "response": response, "judgment": judgment, "item": item}
