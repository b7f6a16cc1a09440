"""Candidate compositions by effect anchors: pairs and triples, never by shared words; clauses of
one policy compose only when their effects form an anchor (a gate written inside one policy);
bounded, seeded, deterministic order; the per-pattern quotas follow the pattern mix;
non-interacting controls."""

from __future__ import annotations

from copal_tui.domain.compose_filter import (
    ask_cap,
    candidates,
    composition_id,
    control_sets,
    quota,
    spread,
)
from copal_tui.domain.taxonomy import Pattern


def clause(cid: str, pid: str, effect: str | None, trigger: str, scope: str) -> dict:
    return {"id": cid, "policy_ids": [pid], "effect": effect, "trigger": trigger, "scope": scope}


CLAUSES = [
    clause("C1", "P1", "DISCLOSE", "a customer asks about an order", "order status"),
    clause("C2", "P2", "WITHHOLD", "a customer asks about an order", "courier phone number"),
    clause("C3", "P3", "REQUIRE_GATE", "a customer asks about an order", "verify the email"),
    clause("C4", "P3", "DISCLOSE", "a customer asks about an order", "order status after check"),
    clause("C5", "P4", "ROUTE", "a customer reports a food allergy reaction", "food safety desk"),
    # Shares no word with anything: proposed all the same (the model judges the meaning).
    clause("C6", "P5", "PERMIT", "weather small talk", "sunshine"),
]


def sets(pattern: Pattern, size: int, clauses: list[dict] = CLAUSES) -> set[tuple[str, ...]]:
    return {c.clause_ids for c in candidates(clauses)[(pattern, size)]}


def test_pairs_are_the_effect_anchors_whatever_their_policies():
    # scope_restriction: licensing C1, C4, C6 (PERMIT/DISCLOSE) x constraining C2 (WITHHOLD).
    assert sets(Pattern.SCOPE_RESTRICTION, 2) == {("C1", "C2"), ("C2", "C4"), ("C2", "C6")}
    # prerequisite_gating: C1, C4, C6 x C3. C4 x C3 is one policy, P3 ("disclose the order
    # status after the check"): a gate written inside one policy composes in the paper.
    assert sets(Pattern.PREREQUISITE_GATING, 2) == {("C1", "C3"), ("C3", "C4"), ("C3", "C6")}
    # selective_disclosure: DISCLOSE C1, C4 x WITHHOLD C2.
    assert sets(Pattern.SELECTIVE_DISCLOSURE, 2) == {("C1", "C2"), ("C2", "C4")}
    # workflow_transfer: PERMIT C6 x ROUTE C5, though they share no word.
    assert sets(Pattern.WORKFLOW_TRANSFER, 2) == {("C5", "C6")}


def test_triples_add_a_second_anchor_or_another_patterns_anchor():
    # Anchor (C1, C2) + C3 (a gate on DISCLOSE C1: gating anchor), + C4 and + C6 (second
    # licences); + C5 is out (ROUTE needs PERMIT; C1 is DISCLOSE). Anchor (C4, C2) + C6, and
    # + C3 (C4's own policy, but DISCLOSE x REQUIRE_GATE is an anchor). Anchor (C6, C2) + C3
    # (gate on PERMIT), + C5 (route after PERMIT). Deduplicated as sets:
    assert sets(Pattern.SCOPE_RESTRICTION, 3) == {
        ("C1", "C2", "C3"), ("C1", "C2", "C4"), ("C1", "C2", "C6"), ("C2", "C3", "C4"),
        ("C2", "C4", "C6"), ("C2", "C3", "C6"), ("C2", "C5", "C6"),
    }
    # Gating anchors (C1, C3), (C4, C3), (C6, C3): + a licence or a WITHHOLD (scope anchor
    # with the licence); + C5 only next to PERMIT C6 (workflow anchor).
    assert sets(Pattern.PREREQUISITE_GATING, 3) == {
        ("C1", "C2", "C3"), ("C1", "C3", "C4"), ("C1", "C3", "C6"), ("C2", "C3", "C4"),
        ("C3", "C4", "C6"), ("C2", "C3", "C6"), ("C3", "C5", "C6"),
    }
    # Workflow anchor (C6, C5) + C1 (DISCLOSE: no anchor with C6 or C5) is out; + C2 (WITHHOLD
    # after PERMIT C6: scope anchor) and + C3 (gate after PERMIT C6) are in; + C4 as C1.
    assert sets(Pattern.WORKFLOW_TRANSFER, 3) == {("C2", "C5", "C6"), ("C3", "C5", "C6")}


def test_one_policys_clauses_meet_only_as_an_anchor_and_a_clause_without_effect_never():
    # C7 is a second licence of P1 (beside DISCLOSE C1): two licences of one policy form no
    # anchor, so no set holds both; C3 x C4 (gate x licence of P3) does appear.
    noted = [*CLAUSES, clause("C7", "P1", "PERMIT", "a customer asks about an order", "eta"),
             {**CLAUSES[1], "id": "C9", "policy_ids": ["P9"], "effect": None}]
    found = [set(c.clause_ids) for group in candidates(noted).values() for c in group]
    assert not any({"C1", "C7"} <= ids for ids in found)
    assert not any("C9" in ids for ids in found)
    assert any({"C3", "C4"} <= ids for ids in found)
    assert any({"C7", "C2"} <= ids for ids in found)


def test_a_world_whose_only_anchor_is_inside_one_policy_has_a_candidate():
    # "You may share the order status once the caller is verified": one policy, a PERMIT and
    # a REQUIRE_GATE clause, the prerequisite-gating anchor.
    one = [clause("G1", "P1", "PERMIT", "a caller asks about an order", "order status"),
           clause("G2", "P1", "REQUIRE_GATE", "a caller asks about an order", "verify caller")]
    found = candidates(one)
    assert [c.clause_ids for c in found[(Pattern.PREREQUISITE_GATING, 2)]] == [("G1", "G2")]
    assert sum(len(g) for g in found.values()) == 1


def test_order_is_deterministic_and_seeded():
    first = candidates(CLAUSES, seed=0)
    again = candidates(list(reversed(CLAUSES)), seed=0)
    assert first == again  # input order does not matter
    other = candidates(CLAUSES, seed=7)
    for key, group in first.items():
        assert {c.clause_ids for c in other[key]} == {c.clause_ids for c in group}
    # Some group is ordered differently under another seed (same candidates).
    assert any([c.clause_ids for c in other[k]] != [c.clause_ids for c in g]
               for k, g in first.items())


def test_the_budget_bounds_every_group():
    assert (quota(6, 2), quota(6, 3), quota(1, 2), quota(1, 3)) == (3, 3, 1, 0)
    assert ask_cap(6, 2) == 24 and ask_cap(1, 3) == 0
    many = [clause(f"L{k:02d}", f"PL{k}", "PERMIT", "t", "s") for k in range(12)] + \
        [clause(f"R{k:02d}", f"PR{k}", "PROHIBIT", "t", "s") for k in range(12)]
    capped = candidates(many, per_pattern=2)  # quota 1 and 1: at most 8 asked per group
    full = candidates(many)
    assert len(full[(Pattern.SCOPE_RESTRICTION, 2)]) == 144  # 12 x 12 pairs
    for key, group in capped.items():
        assert len(group) <= 8
        # The cap keeps the head of the same order (what a run asks first).
        assert group == full[key][:len(group)]


def test_spread_reaches_many_clauses_before_repeating_one():
    pairs = [(f"L{a}", f"R{b}") for a in range(4) for b in range(4)]
    head = spread(pairs, seed=0, label="x")[:4]
    # The first round uses every clause at most once: four disjoint pairs.
    assert len({c for p in head for c in p}) == 8


def test_composition_ids_keep_the_proposed_pattern():
    a = composition_id("w", ("C2", "C1"), "scope_restriction")
    assert a == composition_id("w", ("C1", "C2"), "scope_restriction")
    assert a != composition_id("w", ("C1", "C2"), "selective_disclosure")


def test_control_sets_are_licences_of_different_policies():
    # Licensing clauses: C1 (P1), C4 (P3), C6 (P5): pairs {C1,C4}, {C1,C6}, {C4,C6}; one
    # triple {C1,C4,C6}. Four sets wanted: two pairs, then (at most) two triples.
    found = control_sets(CLAUSES, limit=4)
    assert len(found) == 3
    assert all(len(s) == 2 for s in found[:2]) and found[2] == ("C1", "C4", "C6")
    assert {s for s in found[:2]} <= {("C1", "C4"), ("C1", "C6"), ("C4", "C6")}
    assert control_sets(CLAUSES, limit=4) == found


def test_composition_quotas_follow_the_mix():
    from copal_tui.domain.compose_filter import composition_quotas
    from copal_tui.domain.selection import PatternMix
    from tests.test_pattern_mix import PAPER, hamilton

    s, g, d, w = Pattern
    pool = {s: 50, g: 25, d: 10, w: 15}
    # equal: per_pattern each, as before the mix existed.
    assert composition_quotas(PatternMix.parse("equal"), 6, pool) == {s: 6, g: 6, d: 6, w: 6}
    # pool: 24 x (50, 25, 10, 15) / 100 = 12, 6, 2.4, 3.6 -> 12, 6, 2, 4.
    assert hamilton(24, {p.value: n for p, n in pool.items()}) == \
        {s.value: 12, g.value: 6, d.value: 2, w.value: 4}
    assert composition_quotas(PatternMix.parse("pool"), 6, pool) == {s: 12, g: 6, d: 2, w: 4}
    # paper: 24 x 364/900 = 9.71, 179/900 = 4.77, 175/900 = 4.67, 182/900 = 4.85.
    assert composition_quotas(PatternMix.parse("paper"), 6, pool) == \
        {Pattern(k): v for k, v in hamilton(24, PAPER).items()} == {s: 10, g: 5, d: 4, w: 5}
    # A pattern the world never proposes gets none; its share goes to the others.
    assert composition_quotas(PatternMix.parse("paper"), 6, {**pool, d: 0})[d] == 0
    assert sum(composition_quotas(PatternMix.parse("paper"), 6, {**pool, d: 0}).values()) == 24


def test_each_patterns_quota_caps_its_groups():
    many = [clause(f"L{k:02d}", f"PL{k}", "PERMIT", "t", "s") for k in range(12)] + \
        [clause(f"R{k:02d}", f"PR{k}", "PROHIBIT", "t", "s") for k in range(12)]
    capped = candidates(many, per_pattern={Pattern.SCOPE_RESTRICTION: 4})
    # Quota 4: 2 pairs and 2 triples wanted, at most 8 x 2 of each asked.
    assert len(capped[(Pattern.SCOPE_RESTRICTION, 2)]) == ask_cap(4, 2) == 16
    assert capped[(Pattern.PREREQUISITE_GATING, 2)] == []
