"""Sampling traffic pairs into a campaign: a seeded random sample (the same seed, the same pairs),
`--balanced` giving each source its share in proportion to its pairs, the interval width the
sample's size gives, and a seed refused for a suite whose queue has a fixed order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from tests.traffic_support import build_traffic_db, rows


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--db", str(db), *args])


def members(db: Path, name: str) -> list[str]:
    return [r["subject"] for r in rows(db, "SELECT subject FROM campaign_subjects WHERE "
                                           "campaign = ? ORDER BY position", (name,))]


def test_the_same_seed_draws_the_same_pairs(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    for name in ("a", "b"):
        assert invoke(db, "campaign", "create", name, "--suite", "traffic", "--size", "3",
                      "--seed", "7").exit_code == 0
    assert members(db, "a") == members(db, "b") and len(members(db, "a")) == 3
    drawn = set()
    for seed in range(10):
        name = f"s{seed}"
        assert invoke(db, "campaign", "create", name, "--suite", "traffic", "--size", "3",
                      "--seed", str(seed)).exit_code == 0
        drawn.add(tuple(members(db, name)))
    assert len(drawn) > 1  # the seed changes the sample


def test_balanced_gives_each_source_its_share(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)  # web: 4 pairs, app: 2
    result = invoke(db, "campaign", "create", "half", "--suite", "traffic", "--size", "3",
                    "--balanced", "--seed", "3")
    assert result.exit_code == 0, result.output
    sources = [r["source"] for r in rows(
        db, "SELECT p.source FROM campaign_subjects s JOIN traffic_pairs p ON p.id = s.subject "
            "WHERE s.campaign = 'half'")]
    assert sorted(sources) == ["app", "web", "web"]  # 3 x 4/6 and 3 x 2/6


def test_the_campaign_says_what_its_size_can_tell_apart(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    result = invoke(db, "campaign", "create", "all", "--suite", "traffic")
    assert result.exit_code == 0, result.output
    # Wilson at 1 error of 6 (17%), z = 1.96: centre (1/6 + z^2/12) / (1 + z^2/6) = 0.2968,
    # half-width z / (1 + z^2/6) * sqrt((1/6)(5/6)/6 + z^2/144) = 0.2667.
    assert "measured on 6 subject(s) has a 95% interval of about +/-26.7 points" in \
        result.output
    shown = invoke(db, "campaign", "show", "all")
    assert "+/-26.7 points" in shown.output


def test_a_seed_is_refused_for_a_suite_with_a_fixed_order(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    result = invoke(db, "campaign", "create", "x", "--suite", "copal", "--seed", "3")
    assert result.exit_code == 2
    assert "a seed applies to a suite that samples at random" in result.output
    assert rows(db, "SELECT name FROM campaigns WHERE name = 'x'") == []
