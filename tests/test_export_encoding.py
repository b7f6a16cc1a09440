"""The interchange export writes its bulk record types with orjson and every other type with the
standard encoder: the lines must be the same bytes either way, or an export stops being
byte-stable across versions (and a re-import of an older export would see "other content")."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from copal_tui.interchange.exporter import encode_record

# The encoder every export used before, spelled out here rather than imported, so the
# comparison does not depend on the module under test.
_REFERENCE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

_TEXT = st.text(st.characters(codec="utf-8"), max_size=60)
_ID = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,20}", fullmatch=True)


@st.composite
def judgments(draw: st.DrawFn) -> dict[str, object]:
    return {
        "type": "judgment", "id": draw(_ID), "response_id": draw(_ID), "judge": draw(_TEXT),
        "mode": draw(st.sampled_from(["contract", "full_policy"])),
        "observed": draw(st.none() | st.lists(_ID, max_size=4)),
        "error": draw(st.none() | st.sampled_from([0, 1])),
        "facet": draw(st.none() | _TEXT), "rationale": draw(st.none() | _TEXT),
        "evidence": draw(st.none() | st.dictionaries(_TEXT, _TEXT, max_size=3)),
    }


@st.composite
def labels(draw: st.DrawFn) -> dict[str, object]:
    return {
        "type": draw(st.sampled_from(["label", "adjudication"])), "response_id": draw(_ID),
        "annotator": draw(_TEXT), "observed": draw(st.none() | st.lists(_ID, max_size=4)),
        "error": draw(st.none() | st.sampled_from([0, 1])), "facet": draw(st.none() | _TEXT),
        "note": draw(st.none() | _TEXT), "created_at": draw(_TEXT),
    }


@st.composite
def items(draw: st.DrawFn) -> dict[str, object]:
    contract = st.lists(st.fixed_dictionaries({
        "id": _ID, "text": _TEXT, "kind": _TEXT, "clause_id": st.none() | _ID}), max_size=3)
    return {
        "type": "item", "id": draw(_ID), "world_id": draw(_ID),
        "composition_id": draw(st.none() | _ID), "pattern": draw(st.none() | _TEXT),
        "facet": draw(st.none() | _TEXT), "query": draw(_TEXT), "required": draw(contract),
        "forbidden": draw(contract), "method": draw(_TEXT), "parent_item_id": draw(st.none() | _ID),
        "selected": draw(st.booleans()), "trap": draw(st.none() | _TEXT),
    }


@settings(max_examples=300, deadline=None)
@given(st.one_of(judgments(), labels(), items(), st.builds(
    lambda i, item, model, text, variant: {"type": "response", "id": i, "item_id": item,
                                           "model": model, "text": text, "variant": variant},
    _ID, _ID, _TEXT, st.none() | _TEXT, _TEXT)))
def test_bulk_records_are_written_as_the_standard_encoder_writes_them(record: dict) -> None:
    assert encode_record(record) == _REFERENCE(record)


def test_every_control_character_and_the_characters_json_escapes_are_spelled_alike() -> None:
    text = "".join(map(chr, range(0x80))) + "\x7f\x85\u2028\u2029\ufeff\U0001f600é\\\"/"
    record = {"type": "response", "id": "r1", "item_id": "i1", "model": "m", "text": text,
              "variant": "base"}
    line = encode_record(record)
    assert line == _REFERENCE(record)
    assert "\\u0000" in line and "\\n" in line and "\u2028" in line


def test_what_orjson_cannot_write_falls_back_to_the_standard_encoder() -> None:
    # A lone surrogate (not UTF-8) and an integer beyond 64 bits: orjson refuses both.
    for record in ({"type": "response", "id": "r1", "item_id": "i1", "model": "m",
                    "text": "half \ud800 pair", "variant": "base"},
                   {"type": "judgment", "id": "j1", "response_id": "r1", "judge": "j",
                    "mode": "contract", "observed": None, "error": 2 ** 70, "facet": None,
                    "rationale": None, "evidence": None}):
        assert encode_record(record) == _REFERENCE(record)


def test_a_type_that_may_hold_floats_keeps_the_standard_spelling() -> None:
    for record in ({"type": "clause", "id": "c1", "confidence": 1e-05, "score": 1e16},
                   {"type": "item", "id": "i1", "screening": {"score": 1e-05, "n": 1e16}}):
        line = encode_record(record)
        assert line == _REFERENCE(record)
        assert "1e-05" in line and "1e+16" in line
