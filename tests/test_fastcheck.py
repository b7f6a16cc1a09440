"""The import's hand-written record checks against the schema they stand in for.

`fastcheck` may hand any record over to the pydantic schema (by returning None), but when it
accepts one, the schema must accept it too and dump exactly what the check returned. These
properties draw valid records and spoil, remove or add a field or two, from valid and invalid
values alike (wrong types, empty text, malformed ids, unknown enum values, missing and extra
keys, repeated or missing contract items and marks), and compare the two.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from copal_tui.domain.schema import RECORD_ADAPTER
from copal_tui.interchange import fastcheck

_MISSING = object()
_IDS = st.sampled_from(["I1", "w-1", "a:b/c@d+e.f_g", "", " I1", "I1\n", "-x", "é", 7, None,
                        "x" * 200, "x" * 201])
_TEXTS = st.sampled_from(["Refund policy.", " ", "", 3, None, ["t"]])
_MAYBE_ID = st.one_of(st.none(), _IDS)


def _schema(record: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return RECORD_ADAPTER.validate_python(copy.deepcopy(record)).model_dump(mode="json")
    except ValidationError:
        return None


@st.composite
def _contract_item(draw: st.DrawFn, cid: str) -> Any:
    c: dict[str, Any] = {"id": cid, "text": "Says how."}
    if draw(st.booleans()):
        c["kind"] = draw(st.sampled_from(["content", "action", "gate", "route"]))
    if draw(st.booleans()):
        c["clause_id"] = draw(st.sampled_from([None, "w:C1"]))
    # Then, one time in four, one field spoilt, removed or added.
    if draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(["id", "text", "kind", "clause_id", "extra"]))
        value = draw(st.one_of(_VALUES[key], st.just(_MISSING)))
        if value is _MISSING:
            c.pop(key, None)
        else:
            c[key] = value
    return c if draw(st.integers(0, 19)) else draw(st.sampled_from(["R1", None, ["R1"]]))


_VALUES: dict[str, st.SearchStrategy] = {
    "id": _IDS, "world_id": _IDS, "composition_id": _MAYBE_ID, "parent_item_id": _MAYBE_ID,
    "text": _TEXTS, "query": _TEXTS, "clause_id": _MAYBE_ID,
    "kind": st.sampled_from(["content", "action", "nope", 1, None]),
    "pattern": st.sampled_from([None, "scope_restriction", "prerequisite_gating", "made_up", 0]),
    "facet": st.sampled_from([None, "boundary_overreach", "over_refusal", "made_up", True]),
    "method": st.sampled_from(["copal", "projection", "manual", "nope", None]),
    "selected": st.sampled_from([True, False, 0, 1, "true", None]),
    "trap": st.sampled_from([None, "", "a trap", 5]),
    "screening": st.sampled_from([None, {"passed": True}, "yes"]),
    "required": st.sampled_from([None, "R1", {}, []]),
    "forbidden": st.sampled_from([None, "F1", {}, []]),
    "type": st.sampled_from(["item", "response", "judgment"]),
    "extra": st.sampled_from([1, "x"]),
    "item_id": _IDS, "response_id": _IDS, "model": _TEXTS, "judge": _TEXTS,
    "variant": st.sampled_from(["base", "", "v2", 1, None]),
    "mode": st.sampled_from(["contract", "full_policy", "other", None]),
    "observed": st.sampled_from([None, [], ["R1"], ["R1", "R1"], ["R1", "F1"], ["bad id"],
                                 "R1", [1]]),
    "error": st.sampled_from([None, 0, 1, 2, True, 1.0, "1"]),
    "rationale": st.sampled_from([None, "", "why", 3]),
    "evidence": st.sampled_from([None, {}, {"R1": "a quote"}, {"R1": 1}, "a quote"]),
}


def _spoil(draw: st.DrawFn, record: dict[str, Any]) -> dict[str, Any]:
    """None, one or two of the record's fields spoilt, removed or added."""
    for key in draw(st.lists(st.sampled_from(sorted(_VALUES)), max_size=2)):
        value = draw(st.one_of(_VALUES[key], st.just(_MISSING)))
        if value is _MISSING:
            record.pop(key, None)
        else:
            record[key] = value
    return record


@st.composite
def responses(draw: st.DrawFn) -> dict[str, Any]:
    record = {"type": "response", "id": "I1@m", "item_id": "I1", "model": "vendor/model",
              "text": draw(st.sampled_from(["Here is how.", ""]))}
    if draw(st.booleans()):
        record["variant"] = "base"
    return _spoil(draw, record)


@st.composite
def judgments(draw: st.DrawFn) -> dict[str, Any]:
    record = {"type": "judgment", "id": "I1@m+j", "response_id": "I1@m", "judge": "vendor/j",
              "mode": draw(st.sampled_from(["contract", "full_policy"]))}
    for key in ("observed", "error", "facet", "rationale", "evidence"):
        if draw(st.booleans()):
            record[key] = draw({"observed": st.sampled_from([["R1"], [], ["R1", "F1"]]),
                                "error": st.sampled_from([0, 1]),
                                "facet": st.sampled_from([None, "over_refusal"]),
                                "rationale": st.just("Why."),
                                "evidence": st.just({"R1": "a quote"})}[key])
    return _spoil(draw, record)


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    """A valid item, then none, one or two of its fields spoilt, removed or added."""
    record = _valid_item(draw(st.integers(0, 9)))
    record["required"] = [draw(_contract_item(f"R{i}")) for i in range(draw(st.integers(0, 2)))]
    # Forbidden ids may repeat one another or a required id (the schema refuses both).
    record["forbidden"] = [draw(_contract_item(draw(st.sampled_from(["F1", "F2", "F3", "R0"]))))
                           for _ in range(draw(st.integers(0, 2)))]
    return _spoil(draw, record)


def _valid_item(n: int) -> dict[str, Any]:
    return {"type": "item", "id": f"I{n}", "world_id": "w", "composition_id": None,
            "pattern": "scope_restriction", "facet": None, "query": "Can I return it?",
            "required": [{"id": "R1", "text": "Says how.", "clause_id": "w:C1"}],
            "forbidden": [{"id": "F1", "text": "Promises cash.", "kind": "content"}],
            "method": "copal", "parent_item_id": None, "selected": True}


@settings(max_examples=1500, deadline=None)
@given(items())
def test_an_item_the_check_accepts_is_dumped_as_the_schema_dumps_it(record):
    fast = fastcheck.item(copy.deepcopy(record))
    if fast is not None:
        assert _schema(record) == fast


@settings(max_examples=1500, deadline=None)
@given(st.one_of(responses(), judgments()))
def test_a_response_or_judgment_the_check_accepts_is_what_the_schema_dumps(record):
    fast = fastcheck.FAST_CHECKS[record["type"]](copy.deepcopy(record)) if record.get(
        "type") in ("response", "judgment") else None
    if fast is not None:
        assert _schema(record) == fast


def test_the_check_takes_a_typical_item_and_fills_the_schema_defaults():
    fast = fastcheck.item(_valid_item(1))
    assert fast is not None
    assert fast == _schema(_valid_item(1))
    assert fast["trap"] is None and fast["screening"] is None
    assert fast["required"][0]["kind"] == "content"
    assert fast["forbidden"][0]["clause_id"] is None


def test_the_check_hands_over_what_the_schema_refuses():
    # Each of these the schema refuses: the check must not accept any of them.
    spoilt = []
    for change in ({"pattern": "made_up"}, {"query": ""}, {"selected": None},
                   {"forbidden": [{"id": "R1", "text": "Same id as a required item."}]},
                   {"required": [], "forbidden": []}, {"extra": 1}, {"id": "bad id"}):
        record = {**_valid_item(2), **change}
        assert _schema(record) is None, change
        spoilt.append(fastcheck.item(record))
    assert spoilt == [None] * len(spoilt)
