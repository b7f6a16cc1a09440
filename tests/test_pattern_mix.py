"""The relation-pattern mix of the selected suite (COPAL Sections 3.2-3.3, Tables 2 and 8).

The paper's 900 selected queries are scope restriction 364, prerequisite gating 179, selective
disclosure 175 and workflow transfer 182: the patterns' natural frequency, not equal quotas. So
`--pattern-mix pool` (the default) shares a world's budget among patterns by their counts among
the world's screened candidates, `paper` by Table 8's counts, and `equal` is the plain
pattern x facet cell balancing. The proportional rule, restated here (`hamilton`), is
largest-remainder apportionment: each pattern gets the whole part of budget x weight / total
weight, and the places left go one each to the largest remainders (ties: the larger weight,
then the report's pattern order); a pattern with fewer candidates than its share keeps what it
has and the rest is apportioned again among the others.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from copal_tui.domain.selection import (
    Candidate,
    PatternMix,
    greedy_select,
    selection_quotas,
)
from copal_tui.domain.taxonomy import PATTERN_FACETS, Pattern
from tests.db_support import query_rows

S, G, D, W = (p.value for p in Pattern)  # the report's order
# Table 8 of the paper, restated.
PAPER = {S: 364, G: 179, D: 175, W: 182}


def hamilton(total: int, weights: dict[str, int], caps: dict[str, int] | None = None,
             ) -> dict[str, int]:
    order = [p for p in (S, G, D, W) if weights.get(p, 0) > 0]
    out = {p: 0 for p in weights}
    caps = caps or {}
    while order:
        whole = sum(weights[p] for p in order)
        exact = {p: Fraction(total * weights[p], whole) for p in order}
        got = {p: math.floor(exact[p]) for p in order}
        left = total - sum(got.values())
        by_rest = sorted(order, key=lambda p: (got[p] - exact[p], -weights[p], order.index(p)))
        for p in by_rest[:left]:
            got[p] += 1
        short = [p for p in order if p in caps and got[p] > caps[p]]
        if not short:
            return {**out, **got}
        for p in short:
            out[p] = caps[p]
            total -= caps[p]
            order.remove(p)
    return out


def _word(n: int) -> str:
    letters = ""
    while True:
        n, r = divmod(n, 26)
        letters += chr(97 + r)
        if not n:
            return "qx" + letters


def pool(counts: dict[str, int]) -> list[Candidate]:
    """`counts[pattern]` screened candidates per pattern, cycling over its three facets, each
    with its own composition and a query sharing no word with another."""
    out = []
    k = 0
    for pattern, n in counts.items():
        facets = PATTERN_FACETS[Pattern(pattern)]
        for i in range(n):
            k += 1
            query = " ".join(_word(3 * k + j) for j in range(3))
            out.append(Candidate(f"{pattern}-{i:02d}", pattern, facets[i % 3].value, query,
                                 confidence=0.9, naturalness=0.9, composition_id=f"K{k}"))
    return out


def mix_of(cands: list[Candidate], chosen: list[str]) -> Counter[str]:
    pattern = {c.id: c.pattern for c in cands}
    return Counter(pattern[i] for i in chosen)


def select(cands: list[Candidate], budget: int, mix: str) -> list[str]:
    return greedy_select(cands, budget, selection_quotas(PatternMix.parse(mix), cands, budget))


def test_the_default_mix_follows_the_pool():
    counts = {S: 20, G: 10, D: 6, W: 4}
    cands = pool(counts)
    chosen = select(cands, 15, "pool")
    # 15 x (20, 10, 6, 4) / 40 = 7.5, 3.75, 2.25, 1.5: whole parts 7, 3, 2, 1; the two places
    # left go to gating (.75) and then scope restriction (.5, tied with workflow transfer,
    # which weighs less).
    assert hamilton(15, counts) == {S: 8, G: 4, D: 2, W: 1}
    assert mix_of(cands, chosen) == hamilton(15, counts)
    # Within its quota a pattern still covers its facet cells evenly.
    facets = Counter(c.facet for c in cands if c.id in chosen and c.pattern == S)
    assert sorted(facets.values()) == [2, 3, 3]


def test_equal_is_the_cell_balancing_of_old():
    cands = pool({S: 20, G: 10, D: 6, W: 4})
    # No pattern quota: twelve places over the twelve pattern x facet cells, one each.
    chosen = select(cands, 12, "equal")
    assert selection_quotas(PatternMix.parse("equal"), cands, 12) is None
    assert chosen == greedy_select(cands, 12)
    assert mix_of(cands, chosen) == {S: 3, G: 3, D: 3, W: 3}
    assert len({(c.pattern, c.facet) for c in cands if c.id in chosen}) == 12


def test_paper_gives_table_8s_shares():
    cands = pool({S: 20, G: 10, D: 8, W: 8})
    # 30 x 364/900 = 12.13, x 179/900 = 5.97, x 175/900 = 5.83, x 182/900 = 6.07.
    assert hamilton(30, PAPER) == {S: 12, G: 6, D: 6, W: 6}
    assert mix_of(cands, select(cands, 30, "paper")) == hamilton(30, PAPER)


def test_a_short_pattern_keeps_what_it_has_and_the_rest_is_shared_again():
    counts = {S: 20, G: 2, D: 10, W: 10}
    cands = pool(counts)
    # Gating's 6 of 30 exceed its 2 candidates: it keeps 2; 28 are shared by 364/175/182.
    expected = hamilton(30, PAPER, caps=counts)
    assert expected[G] == 2 and sum(expected.values()) == 30
    assert mix_of(cands, select(cands, 30, "paper")) == expected


def test_stated_weights_and_a_filled_budget_when_quotas_run_dry():
    cands = pool({S: 6, G: 6, D: 6, W: 6})
    # 12 x 3/4 = 9 > the 6 scope candidates: scope keeps 6, workflow takes the other 6.
    assert hamilton(12, {S: 3, W: 1}, caps={S: 6, W: 6}) == {S: 6, W: 6}
    got = mix_of(cands, select(cands, 12, "scope_restriction=3, workflow-transfer=1"))
    assert got == {S: 6, W: 6}
    # Only scope named: its 6 candidates, and the cell balancing fills the other 6 places
    # over the nine cells of the other patterns.
    chosen = select(cands, 12, "scope_restriction=1")
    assert len(chosen) == 12 and mix_of(cands, chosen)[S] == 6


def test_near_duplicates_leave_places_that_the_cell_balancing_fills():
    cands = [c if c.pattern != W else Candidate(c.id, c.pattern, c.facet, "same words here",
                                                0.9, 0.9, c.composition_id)
             for c in pool({S: 6, G: 6, D: 6, W: 6})]
    chosen = select(cands, 12, "equal")
    assert len(chosen) == 12 and mix_of(cands, chosen)[W] == 1
    chosen = select(cands, 12, "paper")  # workflow's 3 places: one query, two duplicates
    assert len(chosen) == 12 and mix_of(cands, chosen)[W] == 1


@pytest.mark.parametrize("bad", ["", "nonsense", "scope_restriction", "scope_restriction=-1",
                                 "scope_restriction=x", "scope_restriction=0",
                                 "scope_restriction=1,scope_restriction=2"])
def test_a_bad_mix_is_refused(bad, cli, initialised):
    with pytest.raises(ValueError):
        PatternMix.parse(bad)
    result = cli("run", "select", "--pattern-mix", bad)
    assert result.exit_code == 2 and "--pattern-mix" in result.output


# ---------------------------------------------------------------- through the pipeline

WORLD = "harbor-clinics"
BUDGET = 24


def _selected(db: Path) -> Counter[str]:
    return Counter(r["pattern"] for r in query_rows(
        db, "SELECT pattern FROM items WHERE selected = 1 AND method = 'copal' "
            "AND parent_item_id IS NULL"))


def _last_select_manifest(db: Path) -> dict:
    [row] = query_rows(db, "SELECT manifest FROM runs WHERE stage = 'select' "
                           "ORDER BY started_at DESC, rowid DESC LIMIT 1")
    return json.loads(row["manifest"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from copal_tui.cli import main
    from copal_tui.resources import sample_worlds_dir

    db = tmp_path_factory.mktemp("mix") / "m.db"
    for args in (["init"], ["import", str(sample_worlds_dir() / "harbor_clinics.yaml")],
                 ["run", "ground", "compose", "generate", "select", "--world", WORLD,
                  "--budget", str(BUDGET), "--generator", "offline/heuristic"]):
        result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return db


def _screened(db: Path) -> dict[str, int]:
    return dict(Counter(r["pattern"] for r in query_rows(
        db, "SELECT pattern, screening FROM items WHERE method = 'copal' AND "
            "parent_item_id IS NULL AND run_id IS NOT NULL")
        if json.loads(r["screening"] or "{}").get("passed")))


def test_the_stage_selects_the_pools_mix_and_records_it(built):
    screened = _screened(built)
    assert set(screened) == {S, G, D, W}
    assert _selected(built) == hamilton(BUDGET, screened)
    manifest = _last_select_manifest(built)
    assert manifest["options"]["copal"]["pattern_mix"] == "pool"
    assert {k: v for k, v in manifest["counts"].items() if k.startswith("selected_")
            and k != "selected_controls"} == {f"selected_{p}": n for p, n in
                                              hamilton(BUDGET, screened).items()}


def test_equal_and_paper_reselect_from_the_same_verdicts(built, cli):
    screened = _screened(built)
    assert cli("run", "select", "--world", WORLD, "--budget", str(BUDGET),
               "--pattern-mix", "equal", db=built).exit_code == 0
    cells = Counter((r["pattern"], r["facet"]) for r in query_rows(
        built, "SELECT pattern, facet FROM items WHERE selected = 1 AND method = 'copal'"))
    # Today's rule: the 24 places spread evenly over the 12 pattern x facet cells.
    assert len(cells) == 12 and set(cells.values()) == {2}
    assert _last_select_manifest(built)["options"]["copal"]["pattern_mix"] == "equal"
    assert cli("run", "select", "--world", WORLD, "--budget", str(BUDGET),
               "--pattern-mix", "paper", db=built).exit_code == 0
    assert _selected(built) == hamilton(BUDGET, PAPER, caps=screened)
    # Back to the default: the same suite as the first run (selection is deterministic).
    assert cli("run", "select", "--world", WORLD, "--budget", str(BUDGET),
               db=built).exit_code == 0
    assert _selected(built) == hamilton(BUDGET, screened)


def test_compose_follows_the_pool_of_proposed_clause_sets(built):
    from copal_tui.domain.compose_filter import pattern_pool, proposals

    clauses = [{**dict(r), "policy_ids": json.loads(r["policy_ids"])} for r in query_rows(
        built, "SELECT id, policy_ids, effect, trigger, scope FROM clauses")]
    proposed = {p.value: n for p, n in pattern_pool(proposals(clauses)).items()}
    wanted = hamilton(4 * 6, proposed)  # 4 x per_pattern (6) accepted compositions
    confirmed = Counter(r["pattern"] for r in query_rows(
        built, "SELECT pattern FROM compositions WHERE status = 'confirmed'"))
    assert all(confirmed[p] <= wanted[p] for p in wanted), (confirmed, wanted)
    [row] = query_rows(built, "SELECT manifest FROM runs WHERE stage = 'compose'")
    assert json.loads(row["manifest"])["options"]["copal"]["pattern_mix"] == "pool"


def test_report_and_stats_set_the_selected_mix_beside_the_papers(built, cli):
    selected = _selected(built)
    doc = json.loads(cli("report", "--json", "--bootstrap", "0", db=built).stdout)
    rows = doc["corpus"]["pattern_mix"]
    assert [r["pattern"] for r in rows] == [S, G, D, W]
    total = sum(selected.values())
    for r in rows:
        assert r["selected"] == selected[r["pattern"]]
        assert r["selected_share"] == pytest.approx(selected[r["pattern"]] / total)
        assert (r["paper"], r["paper_share"]) == (PAPER[r["pattern"]],
                                                 pytest.approx(PAPER[r["pattern"]] / 900))
    # Table 8 as printed: 40.4%, 19.9%, 19.4%, 20.2%.
    assert [round(100 * r["paper_share"], 1) for r in rows] == [40.4, 19.9, 19.4, 20.2]
    stats = json.loads(cli("stats", "--json", db=built).stdout)
    mine = "/".join(f"{100 * selected[p] / total:.1f}" for p in (S, G, D, W))
    assert stats["selected_pattern_mix"] == f"{mine}% (paper 40.4/19.9/19.4/20.2%)"
    text = cli("report", "--bootstrap", "0", db=built).stdout
    # The terminal shows shares as fractions, like every rate of the report.
    assert "0.404" in text and "0.202" in text
