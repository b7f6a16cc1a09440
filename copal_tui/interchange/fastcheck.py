"""Hand-written checks of the two record types that make up most of a large interchange file
(responses and judgments), for the import's hot path.

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

from copal_tui.domain.taxonomy import Facet, JudgeMode

# The schema's `Id`: what its pattern and max_length allow.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]*")
_ID_MAX = 200
_MODES = frozenset(m.value for m in JudgeMode)
_FACETS = frozenset(f.value for f in Facet)

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


FAST_CHECKS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "response": response, "judgment": judgment}
