"""Which filters `copal campaign create` and `copal label --judge` take, what each value must
name, and the agreement `copal campaign show` prints are the suite's annotation rules'
(`Rules.draws_by`, `Rules.agreement`): a suite registered here gets them through its rules
alone, with no command naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from copal_tui.domain.suites import register, unregister
from copal_tui.metrics.document_base import FlatModel, Metric
from copal_tui.services import launch
from copal_tui.services.annotation.suites import (
    WORLD,
    Agreement,
    AgreementRow,
    Draw,
    Filters,
)
from copal_tui.tui.app import CopalApp
from store.annotation.campaigns import Candidate
from store.db import Database
from tests import fourth_suite
from tests.db_support import query_dicts
from tests.fourth_suite import PolicyReviewRules
from tests.sample_store_support import copal, ok
from tests.tui_label_support import build_db

NAME = "policy_kind"  # a suite reviewing policies, drawn by world, kind and judge
KINDS = ("allow", "deny", "procedure")


class Figures(FlatModel):
    """What the suite's agreement is in the JSON."""

    n_subjects: int
    annotators: list[str]


class PolicyKindRules(PolicyReviewRules):
    name = NAME
    draws_by: ClassVar[Mapping[str, Draw]] = {
        "worlds": WORLD,
        "patterns": Draw("the kind of a policy", spellings=KINDS, means="the policy's kind"),
        "judges": Draw("a judge with COPAL judgments", launch.judges,
                       means="the judge whose marks are in view"),
    }

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        kinds = set(filters.patterns)
        found = super().candidates(db, filters)
        return [c for c in found if not kinds or _kind(db, c.subject) in kinds]

    def agreement(self, db: Database, campaign: str) -> Agreement:
        return Agreement(
            "policies",
            (AgreementRow("clear", 4, 2, Metric.of(0.25),
                          Metric.of(None, "every label is the same")),),
            "1 policy left out", Figures(n_subjects=4, annotators=["ana", "ben"]))


def _kind(db: Database, subject: str) -> str:
    world, _, pid = subject.partition("/")
    return str(db.execute("SELECT kind FROM policies WHERE world_id = ? AND id = ?",
                          (world, pid)).fetchone()[0])


SPEC = replace(fourth_suite.SPEC, name=NAME, annotation=f"{__name__}:PolicyKindRules",
               commands={})


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    register(SPEC)
    register(fourth_suite.SPEC)
    try:
        yield build_db(tmp_path)
    finally:
        unregister(NAME)
        unregister(fourth_suite.NAME)


def error_line(result: Any) -> str:
    """The one error line of a command refused with exit 2."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if "rror" in line]
    assert len(lines) == 1, result.stderr
    return lines[0]


def campaigns(db: Path) -> list[dict[str, Any]]:
    return query_dicts(db, "SELECT name, suite FROM campaigns WHERE kind = 'sample'")


def test_a_suite_draws_by_the_filters_its_rules_name(db: Path) -> None:
    ok(copal(db, "campaign", "create", "deny", "--suite", NAME, "--world", "meridian-bank",
             "--pattern", "Deny", "--judge", "test/judge"))
    placed = query_dicts(db, "SELECT subject FROM campaign_subjects WHERE campaign = 'deny' "
                             "ORDER BY position")
    expected = query_dicts(db, "SELECT 'meridian-bank/' || id AS subject FROM policies WHERE "
                               "world_id = 'meridian-bank' AND kind = 'deny' ORDER BY position")
    assert placed == expected and expected
    spec = json.loads(query_dicts(db, "SELECT spec FROM campaigns WHERE name = 'deny'")[0]
                      ["spec"])
    assert (spec["patterns"], spec["judges"]) == (["deny"], ["test/judge"])


def test_a_value_is_checked_against_what_the_rules_say_it_names(db: Path) -> None:
    before = campaigns(db)
    line = error_line(copal(db, "campaign", "create", "x", "--suite", NAME, "--pattern",
                            "denny"))
    assert "--pattern denny: not the kind of a policy" in line and "deny" in line
    line = error_line(copal(db, "campaign", "create", "x", "--suite", NAME, "--judge",
                            "test/jugde"))
    assert "--judge test/jugde: not a judge with COPAL judgments" in line
    assert "test/judge" in line
    assert campaigns(db) == before


def test_a_filter_the_rules_do_not_name_is_refused(db: Path) -> None:
    # A target model with responses, which a COPAL campaign would take.
    line = error_line(copal(db, "campaign", "create", "x", "--suite", NAME, "--model",
                            "sample/assistant-a"))
    assert f"--suite {NAME} takes no --model (for --suite copal, compass or traffic)" in line
    assert ("its subjects are chosen by --world (a stored world), --pattern (the policy's "
            "kind) and --judge (the judge whose marks are in view)") in line
    # The fourth suite's rules name no filter of their own: it draws by world alone.
    line = error_line(copal(db, "campaign", "create", "x", "--suite", fourth_suite.NAME,
                            "--pattern", "deny"))
    assert f"--suite {fourth_suite.NAME} takes no --pattern (for --suite copal, compass or " \
           f"{NAME})" in line
    assert line.endswith("its subjects are chosen by --world (a stored world)")
    assert campaigns(db) == []


def test_label_takes_a_judge_where_the_suites_rules_draw_by_judge(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: dict[str, Any] = {}
    monkeypatch.setattr(CopalApp, "run", lambda self: started.update(
        suite=self.suite, judge=self.review_judge))
    ok(copal(db, "label", "--suite", NAME, "--judge", "test/judge", "--annotator", "ana"))
    assert started == {"suite": NAME, "judge": "test/judge"}
    started.clear()
    line = error_line(copal(db, "label", "--suite", NAME, "--judge", "test/jugde"))
    assert "--judge test/jugde: not a judge with COPAL judgments" in line
    line = error_line(copal(db, "label", "--suite", fourth_suite.NAME, "--judge", "test/judge"))
    assert line.endswith(f"--suite {fourth_suite.NAME} takes no --judge (for --suite dialogue "
                         f"or {NAME})")
    assert started == {}


def test_campaign_show_prints_the_agreement_the_rules_give(db: Path) -> None:
    ok(copal(db, "campaign", "create", "all", "--suite", NAME))
    shown = ok(copal(db, "campaign", "show", "all")).stdout
    assert "Agreement (policies with two labels or more)" in shown
    cells = [[c for c in line.split() if c not in "│┃"] for line in shown.splitlines()]
    assert ["clear", "4", "2", "0.250", "undefined"] in cells
    assert "1 policy left out" in shown
    assert "undefined: clear alpha: every label is the same" in shown
    as_json = json.loads(ok(copal(db, "campaign", "show", "all", "--json")).stdout)
    assert as_json["agreement"] == {"n_subjects": 4, "annotators": ["ana", "ben"]}
    # A suite whose rules measure no agreement shows none.
    ok(copal(db, "campaign", "create", "plain", "--suite", fourth_suite.NAME))
    assert "agreement" not in json.loads(
        ok(copal(db, "campaign", "show", "plain", "--json")).stdout)
    assert "Agreement" not in ok(copal(db, "campaign", "show", "plain")).stdout
