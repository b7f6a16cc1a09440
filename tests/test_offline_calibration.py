"""Reference-bot calibration on the sample worlds (the numbers the offline engine must hold).

Groundings of every sample world -> confirmed compositions -> generated items for every facet
-> refuse-all / comply-all / keyword-guard -> offline contract judge -> error from the marks.
"""

from __future__ import annotations

import pytest
import yaml

from copal_tui.domain.taxonomy import Facet, Pattern
from copal_tui.resources import sample_worlds_dir
from tests.offline_calibration import run_world, summarise


def _worlds() -> list[dict]:
    return [yaml.safe_load(p.read_text("utf-8"))
            for p in sorted(sample_worlds_dir().glob("*.yaml"))]


@pytest.fixture(scope="module")
def results():
    # Three compositions per pattern and two variants per facet keep this to a few seconds.
    return {w["id"]: run_world(w, n_variants=2, per_pattern=3) for w in _worlds()}


def test_every_composed_item_is_failed_by_refuse_all_and_by_comply_all(results):
    items = [r for rs in results.values() for r in rs]
    assert len(items) > 500
    for r in items:
        assert r.errors["refuse-all"] or r.errors["comply-all"], r.query  # diagnostic
        assert r.errors["refuse-all"] and r.errors["comply-all"], (r.facet, r.query)


def test_keyword_guard_fails_some_items_and_passes_others(results):
    for world, rs in results.items():
        guard = [r.errors["keyword-guard"] for r in rs]
        assert 0 < sum(guard) < len(guard), world
    items = [r for rs in results.values() for r in rs]
    # It never verifies and never routes, so every gating and routing item fails...
    for r in items:
        if r.pattern in (Pattern.PREREQUISITE_GATING, Pattern.WORKFLOW_TRANSFER):
            assert r.errors["keyword-guard"], r.query
    # ...while it can pass scope items by refusing just the restricted part.
    scope = [r for r in items if r.pattern == Pattern.SCOPE_RESTRICTION]
    assert sum(not r.errors["keyword-guard"] for r in scope) >= len(scope) // 3


def test_all_twelve_facets_are_generated(results):
    facets = {r.facet for rs in results.values() for r in rs}
    assert facets == {f.value for f in Facet}


def test_summary_counts(results):
    s = summarise([r for rs in results.values() for r in rs])
    assert s["failed"]["refuse-all"] == s["failed"]["comply-all"] == s["items"]
    assert s["failed_by_refuse_and_comply"] == s["items"]
    assert 0 < s["failed"]["keyword-guard"] < s["items"]


def test_calibration_is_deterministic():
    world = _worlds()[0]
    a = run_world(world, n_variants=2, per_pattern=2)
    b = run_world(world, n_variants=2, per_pattern=2)
    assert [(r.query, r.responses, r.errors) for r in a] == \
        [(r.query, r.responses, r.errors) for r in b]
