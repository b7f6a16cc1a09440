"""A store without what a command shows gets one line saying what is missing and the command
that adds it: no screen of empty tables, no empty run recorded, no label queue that claims
every response has its labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.resources import sample_worlds_dir
from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.db_support import query_rows
from tests.sample_store_support import copal, ok
from tests.test_tui_footer_80 import screen_lines
from tests.tui_label_support import settle


@pytest.fixture
def one_world(initialised: Path) -> Path:
    """A world and its policies, nothing built from them yet."""
    ok(copal(initialised, "import", str(sample_worlds_dir() / "skyline_air.yaml")))
    return initialised


def one_line(result, *words: str) -> str:
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.mark.parametrize("fmt", [(), ("--format", "md"), ("--format", "csv")])
def test_report_of_an_empty_store_says_what_to_import(initialised, fmt):
    one_line(copal(initialised, "report", *fmt), "the store is empty", "copal import")


def test_report_json_of_an_empty_store_is_still_a_document(initialised):
    doc = json.loads(ok(copal(initialised, "report", "--json")).stdout)
    assert doc["scope"]["primary_judge"] is None and doc["scope"]["primary_judge_reason"]


def test_cases_say_which_step_is_missing(initialised):
    one_line(copal(initialised, "cases"), "copal import")
    ok(copal(initialised, "import", str(sample_worlds_dir() / "skyline_air.yaml")))
    one_line(copal(initialised, "cases"), "no test items", "copal run ground")


def test_runs_of_an_empty_store(initialised):
    result = ok(copal(initialised, "runs"))
    assert result.stdout.strip().splitlines() == [
        "no pipeline run yet (`copal run STAGE...` starts one)"]


def test_a_stage_with_nothing_to_work_on_records_no_run(initialised):
    result = copal(initialised, "run", "judge", "--judge", "offline/judge")
    assert result.exit_code == 2 and "copal import" in result.stderr
    result = copal(initialised, "run", "dialogue_judge", "--judge", "offline/judge")
    assert result.exit_code == 2 and "--from complibench" in result.stderr
    assert query_rows(initialised, "SELECT COUNT(*) FROM runs")[0][0] == 0


def _text(app) -> str:
    return " ".join(" ".join(screen_lines(app)).split())


@pytest.mark.parametrize(("suite", "says"), [
    ("copal", ["No responses to label yet", "copal run respond"]),
    ("compass", ["No COMPASS responses to label yet", "copal run compass"]),
    ("dialogue", ["No judge mistakes to review", "judges the stored dialogues"]),
])
async def test_an_empty_label_queue_says_what_is_missing(one_world, suite, says):
    app = make_app(one_world, mode="label", suite=suite, annotator="ana", settings=Settings())
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        shown = _text(app)
        for words in says:
            assert words in shown, shown
        assert "Nothing left" not in shown
