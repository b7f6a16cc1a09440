"""The deterministic composition filter: shared scenario, effect anchors, one policy != a
composition, and ranking by shared content."""

from __future__ import annotations

from copal_tui.domain.compose_filter import candidates
from copal_tui.domain.taxonomy import Pattern


def clause(cid: str, pid: str, effect: str, trigger: str, scope: str) -> dict:
    return {"id": cid, "policy_ids": [pid], "effect": effect, "trigger": trigger, "scope": scope}


CLAUSES = [
    clause("C1", "P1", "DISCLOSE", "a customer asks about an order", "order status and delivery window"),
    clause("C2", "P2", "WITHHOLD", "a customer asks about an order", "courier phone number"),
    clause("C3", "P3", "REQUIRE_GATE", "a customer asks about an order", "verify the order email"),
    clause("C4", "P3", "DISCLOSE", "a customer asks about an order", "order status after check"),
    clause("C5", "P4", "ROUTE", "a customer reports a food allergy reaction", "food safety desk"),
    clause("C6", "P5", "PERMIT", "weather small talk", "sunshine"),
]


def test_pairs_follow_the_effect_anchors():
    found = {(c.clause_ids, c.pattern) for c in candidates(CLAUSES)}
    assert (("C1", "C2"), Pattern.SELECTIVE_DISCLOSURE) in found
    assert (("C1", "C2"), Pattern.SCOPE_RESTRICTION) in found
    assert (("C1", "C3"), Pattern.PREREQUISITE_GATING) in found


def test_two_clauses_of_one_policy_are_not_a_composition():
    assert all(set(c.clause_ids) != {"C3", "C4"} for c in candidates(CLAUSES))


def test_clauses_without_a_shared_scenario_are_not_paired():
    # C6 (weather small talk) shares nothing with the order clauses.
    assert all("C6" not in c.clause_ids for c in candidates(CLAUSES))


def test_clauses_without_an_effect_are_ignored_and_cap_holds():
    noted = [*CLAUSES, {**CLAUSES[1], "id": "C9", "policy_ids": ["P9"], "effect": None}]
    cands = candidates(noted, per_pattern=1)
    assert all("C9" not in c.clause_ids for c in cands)
    assert len([c for c in cands if c.pattern is Pattern.SCOPE_RESTRICTION]) <= 1
