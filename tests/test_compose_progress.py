"""compose at scale: the world's clause sets are counted and walked without being listed, and the
stage shows its planning as progress.

The counts and the sets walked are checked against the definition of a proposal, enumerated
here by brute force over small random worlds (clauses of one or several policies, some without
an effect): pairs are a licensing and a constraining clause of a pattern's anchor; triples add
a third clause that relates to the pair, where two clauses sharing a policy must form an anchor.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from copal_tui.domain.compose_filter import candidates, pattern_pool, proposals
from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect, Pattern
from tests.db_support import query_rows

GROCERY = Path(__file__).parent / "fixtures" / "fresh_basket_grocery.yaml"
EFFECTS = [e.value for e in Effect]


def _anchor(x: str, y: str) -> bool:
    return any((Effect(x) in lic and Effect(y) in con) or (Effect(y) in lic and Effect(x) in con)
               for lic, con in PATTERN_ANCHORS.values())


def _may_join(a: dict, b: dict) -> bool:
    return not set(a["policy_ids"]) & set(b["policy_ids"]) or _anchor(a["effect"], b["effect"])


def _relates(t: str, a: str, b: str, pattern: Pattern) -> bool:
    lic, con = PATTERN_ANCHORS[pattern]
    if Effect(t) in lic | con:
        return True
    return any((Effect(a) in l2 and Effect(t) in c2) or (Effect(t) in l2 and Effect(b) in c2)
               for l2, c2 in PATTERN_ANCHORS.values())


def brute_force(clauses: list[dict]) -> dict[tuple[Pattern, int], set[tuple[str, ...]]]:
    usable = [c for c in clauses if c["effect"] is not None]
    out: dict[tuple[Pattern, int], set[tuple[str, ...]]] = {}
    for pattern, (lic, con) in PATTERN_ANCHORS.items():
        pairs = [(a, b) for a in usable for b in usable
                 if Effect(a["effect"]) in lic and Effect(b["effect"]) in con]
        out[(pattern, 2)] = {tuple(sorted((a["id"], b["id"]))) for a, b in pairs}
        out[(pattern, 3)] = {
            tuple(sorted((a["id"], b["id"], t["id"]))) for a, b in pairs for t in usable
            if t is not a and t is not b and _may_join(a, t) and _may_join(b, t)
            and _relates(t["effect"], a["effect"], b["effect"], pattern)}
    return out


@st.composite
def worlds(draw) -> list[dict]:
    n = draw(st.integers(0, 11))
    policies = [f"P{k}" for k in range(draw(st.integers(1, 5)))]
    return [{"id": f"C{k:02d}", "effect": draw(st.sampled_from([*EFFECTS, None])),
             "policy_ids": draw(st.lists(st.sampled_from(policies), max_size=3, unique=True)),
             "trigger": "t", "scope": "s"} for k in range(n)]


@settings(max_examples=300, deadline=None)
@given(worlds(), st.integers(0, 3))
def test_the_sets_counted_and_walked_are_the_proposals_by_definition(clauses, seed):
    expected = brute_force(clauses)
    found = proposals(clauses)
    assert pattern_pool(found) == {p: len(expected[(p, 2)]) + len(expected[(p, 3)])
                                   for p in Pattern}
    walked = candidates(clauses, seed=seed)
    for key, sets in expected.items():
        ids = [c.clause_ids for c in walked[key]]
        assert len(ids) == len(set(ids))  # each set once
        assert set(ids) == sets, key


@settings(max_examples=100, deadline=None)
@given(worlds(), st.integers(1, 4))
def test_a_capped_group_is_the_head_of_the_full_order(clauses, per_pattern):
    full = candidates(clauses)
    for key, group in candidates(clauses, per_pattern=per_pattern).items():
        assert group == full[key][:len(group)]


def test_pairs_use_each_clause_of_a_side_once_before_any_twice():
    clauses = [{"id": f"L{k}", "effect": "PERMIT", "policy_ids": [f"A{k}"]} for k in range(5)] + \
        [{"id": f"R{k}", "effect": "ROUTE", "policy_ids": [f"B{k}"]} for k in range(3)]
    order = [c.anchor for c in candidates(clauses)[(Pattern.WORKFLOW_TRANSFER, 2)]]
    assert len(set(order)) == 15
    for n in range(1, 16):
        for side in (0, 1):
            uses = Counter(anchor[side] for anchor in order[:n])
            assert max(uses.values()) - min(uses.values()) <= 1 and (
                len(uses) == (5, 3)[side] or max(uses.values()) == 1), (n, side, uses)


def test_compose_shows_its_planning_as_progress(cli, initialised):
    assert cli("import", str(GROCERY)).exit_code == 0
    assert cli("run", "ground", "--generator", "offline/heuristic").exit_code == 0
    result = cli("run", "compose", "--generator", "offline/heuristic")
    assert result.exit_code == 0, result.output
    assert "copal: compose: proposing clause sets for 1 world(s)" in result.stderr
    [row] = query_rows(initialised, "SELECT status FROM runs WHERE stage = 'compose'")
    assert row["status"] == "done"
    assert query_rows(initialised, "SELECT COUNT(*) AS n FROM compositions")[0]["n"] > 0
