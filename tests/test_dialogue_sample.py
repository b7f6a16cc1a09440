"""The shipped CompliBench-style sample (sample_worlds/complibench/): it imports through the
Python importer, has the counts its README states, and its planted judge mistakes give metrics
strictly between 0 and 1 (the values the README works out by hand)."""

from __future__ import annotations

import pytest

from copal_tui.interchange.complibench import conversation_files, parse_conversation
from copal_tui.interchange.complibench_import import import_conversations, import_judge_outputs
from copal_tui.services.report import dialogue_judging
from store.db import connect

JUDGE = "sample-judge"
# domain -> (conversations, assistant turns, Category 1 turns, violation turns), as in README.md
COUNTS = {"telecom": (3, 19, 4, 3), "clinic": (3, 16, 3, 3)}


@pytest.fixture
def sample(samples):
    return samples / "complibench"


@pytest.fixture
def rows(initialised, sample):
    db = connect(initialised)
    assert len(import_conversations(db, sample).added) == 6
    assert len(import_judge_outputs(db, sample, JUDGE).added) == 12  # 2 attempts x 6
    return db, {r.domain: r.to_dict() for r in dialogue_judging(db).rows if r.judge == JUDGE}


def test_stored_counts_match_the_readme(rows):
    db, _ = rows
    for domain, expected in COUNTS.items():
        got = db.execute(
            "SELECT COUNT(DISTINCT d.id), SUM(t.role = 'assistant'), "
            "SUM(t.role = 'assistant' AND t.category = 1), SUM(t.violation) "
            "FROM dialogues d JOIN dialogue_turns t ON t.dialogue_id = d.id "
            "WHERE d.domain = ?", (domain,)).fetchone()
        assert tuple(got) == expected, domain


def test_metrics_are_neither_perfect_nor_zero(rows):
    _, by_domain = rows
    assert set(by_domain) == {"telecom", "clinic", "all"}
    for domain, r in by_domain.items():
        assert r["attempts"] == 2 and r["conversations"] == (6 if domain == "all" else 3)
        for name in ("compliant_turn_accuracy", "violation_detection_accuracy",
                     "strict_violation_detection_accuracy", "conversation_accuracy"):
            assert 0 < r[name] < 1, (domain, name, r[name])


def test_metrics_equal_the_readme_hand_count(rows):
    _, by_domain = rows
    # README "Metrics to expect": every tagged turn (Category 1 too, as CompliBench's script
    # scores them), 29 compliant and 6 violation turns, each attempt's files pooled.
    a = by_domain["all"]
    assert (a["compliant_turns"], a["violation_turns"], a["files"]) == (29, 6, 12)
    assert a["compliant_turn_accuracy"] == pytest.approx((27 + 26) / (29 + 29))
    assert a["violation_detection_accuracy"] == pytest.approx((4 + 4) / 12)
    assert a["strict_violation_detection_accuracy"] == pytest.approx((3 + 3) / 12)
    assert a["conversation_accuracy"] == pytest.approx((2 + 1) / 12)
    assert a["precision"] == pytest.approx((4 + 4) / (5 + 6))
    t, c = by_domain["telecom"], by_domain["clinic"]
    assert (t["compliant_turn_accuracy"], c["compliant_turn_accuracy"]) == \
        pytest.approx(((14 + 15) / 32, (13 + 11) / 26))
    assert (t["conversation_accuracy"], c["conversation_accuracy"]) == \
        pytest.approx((1 / 6, 2 / 6))


def test_sample_shape(sample):
    convs = [parse_conversation(p) for p in conversation_files(sample)]
    for c in convs:
        roles = [t.role for t in c.turns]
        assert 8 <= len(roles) <= 14, c.id
        assert [t.turn_index for t in c.turns] == list(range(len(roles)))
        assert roles == ["user", "assistant"] * (len(roles) // 2), c.id
        # every violation carries its modified guideline, evidence and an override entry
        for t in c.turns:
            if t.violation:
                assert t.guideline_text and t.evidence and t.guideline is not None
                table = c.overrides["cat2_overrides" if t.guideline.category == 2
                                    else "cat3_overrides"]
                assert any(k.lower() == t.guideline.key for k in table), (c.id, t.turn_index)
    for domain in COUNTS:
        with_mistakes = [c for c in convs if c.domain == domain
                         and any(t.violation for t in c.turns)]
        assert len(with_mistakes) == 2, domain


def test_world_import_of_sample_worlds_ignores_the_subfolder(cli, initialised, samples):
    result = cli("import", str(samples))
    assert result.exit_code == 0, result.output
    db = connect(initialised)
    assert db.execute("SELECT COUNT(*) FROM dialogues").fetchone()[0] == 0
