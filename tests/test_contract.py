"""Contract logic: error and direction from marks (property tests)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from copal_tui.domain.contract import content_sha256, correct_marks, evaluate, unknown_ids
from copal_tui.domain.taxonomy import FACET_PATTERN, PATTERN_FACETS, Direction, Facet, Pattern

ids = st.lists(st.text("abcdefgh", min_size=1, max_size=3), unique=True, max_size=6)


@st.composite
def contract_and_marks(draw):
    names = draw(ids)
    split = draw(st.integers(0, len(names)))
    required, forbidden = names[:split], names[split:]
    observed = draw(st.lists(st.sampled_from(names), unique=True) if names else st.just([]))
    return required, forbidden, observed


@given(contract_and_marks())
def test_error_iff_required_missing_or_forbidden_present(case):
    required, forbidden, observed = case
    v = evaluate(required, forbidden, observed)
    missing = [r for r in required if r not in observed]
    present = [f for f in forbidden if f in observed]
    assert v.error == (1 if (missing or present) else 0)
    assert list(v.missing_required) == missing
    assert list(v.present_forbidden) == present


@given(contract_and_marks())
def test_direction_follows_the_sides_that_failed(case):
    required, forbidden, observed = case
    v = evaluate(required, forbidden, observed)
    if v.missing_required and v.present_forbidden:
        assert v.direction is Direction.MIXED
    elif v.present_forbidden:
        assert v.direction is Direction.UNDER
    elif v.missing_required:
        assert v.direction is Direction.OVER
    else:
        assert v.direction is Direction.NONE and v.error == 0


@given(contract_and_marks())
def test_correct_marks_never_err(case):
    required, forbidden, _ = case
    assert evaluate(required, forbidden, correct_marks(required)).error == 0


@given(contract_and_marks(), st.lists(st.text("xyz", min_size=1), max_size=3))
def test_unknown_ids_are_reported(case, extra):
    required, forbidden, observed = case
    assert unknown_ids(required, forbidden, observed + extra) == extra


def test_refusal_fails_required_and_leak_fails_forbidden():
    assert evaluate(["R1"], ["F1"], []).direction is Direction.OVER
    assert evaluate(["R1"], ["F1"], ["R1", "F1"]).direction is Direction.UNDER
    assert evaluate(["R1"], ["F1"], ["F1"]).direction is Direction.MIXED


def test_taxonomy_has_four_patterns_of_three_facets():
    assert len(PATTERN_FACETS) == 4
    assert {f for fs in PATTERN_FACETS.values() for f in fs} == set(Facet)
    assert all(FACET_PATTERN[f] is p for p in Pattern for f in PATTERN_FACETS[p])


@given(st.text(), st.text())
def test_content_hash_changes_with_response(a, b):
    h1 = content_sha256("q", [{"id": "R1"}], [], a)
    h2 = content_sha256("q", [{"id": "R1"}], [], b)
    assert (h1 == h2) == (a == b)
