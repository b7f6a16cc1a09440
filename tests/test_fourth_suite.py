"""A fourth suite plugs in through its descriptor alone (`tests/fourth_suite.py`): once
registered, copal's own `--suite` options, campaigns, annotation queue, log and app take it,
and the built-in suites' registry entries name every part the layers load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.annotation.payloads import CopalLabel
from copal_tui.domain.suites import SUITES, load, register, unregister
from copal_tui.prompts import TASKS
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.tui.app import make_app
from store.db import StoreError, connect
from tests import fourth_suite
from tests.fourth_suite import NAME, PolicyReview, PolicyReviewScreen
from tests.tui_label_support import build_db, rows


@pytest.fixture
def registered() -> Iterator[None]:
    register(fourth_suite.SPEC)
    try:
        yield
    finally:
        unregister(NAME)


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    return result.exit_code, result.output


def test_the_cli_refuses_the_suite_until_it_is_registered(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    code, out = run(db, "campaign", "create", "pr", "--suite", NAME)
    assert code == 2 and f"'{NAME}' is not one of 'copal', 'compass', 'dialogue'" in out
    assert rows(db, "SELECT name FROM campaigns") == []


def test_the_suite_adds_its_own_command_once_registered(tmp_path: Path) -> None:
    db = build_db(tmp_path)
    code, out = run(db, "policy-review-count")
    assert code == 2 and "No such command" in out
    register(fourth_suite.SPEC)
    try:
        code, out = run(db, "policy-review-count")
        assert code == 0, out
        assert out.strip() == f"{rows(db, 'SELECT COUNT(*) AS n FROM policies')[0]['n']} policies"
        assert "policy-review-count" in run(db, "--help")[1]
    finally:
        unregister(NAME)


def test_a_campaign_of_the_fourth_suite_through_the_cli(tmp_path: Path, registered: None
                                                          ) -> None:
    db = build_db(tmp_path)
    code, out = run(db, "campaign", "create", "pr", "--suite", NAME, "--world",
                    "meridian-bank", "--size", "2")
    assert code == 0, out
    assert rows(db, "SELECT name, suite, kind FROM campaigns") == [
        {"name": "pr", "suite": NAME, "kind": "sample"}]
    placed = rows(db, "SELECT position, subject, stratum FROM campaign_subjects "
                      "WHERE campaign = 'pr' ORDER BY position")
    first_two = rows(db, "SELECT 'meridian-bank/' || id AS subject FROM policies WHERE "
                         "world_id = 'meridian-bank' ORDER BY position LIMIT 2")
    assert [p["subject"] for p in placed] == [r["subject"] for r in first_two]
    assert {p["stratum"] for p in placed} == {"meridian-bank"}


def test_the_queue_and_the_log_take_the_fourth_suites_model(tmp_path: Path, registered: None
                                                            ) -> None:
    db_path = build_db(tmp_path)
    db = connect(db_path)
    try:
        queue = AnnotationQueue(db, NAME, "ana")
        queue.prepare()
        subject = queue.take_next()
        assert subject is not None and "/" in subject
        queue.submit(subject, PolicyReview(clear=False, note="two readings of 'minor'"))
        with pytest.raises(TypeError, match="PolicyReview"):
            queue.submit(subject, CopalLabel(observed=[], error=0))
        with pytest.raises(StoreError, match="unknown policy"):
            queue.submit("nowhere/P9", PolicyReview(clear=True))
    finally:
        db.conn.close()
    logged = rows(db_path, "SELECT suite, subject, annotator, action, payload, campaign "
                           "FROM annotations WHERE suite = ?", (NAME,))
    assert logged == [{"suite": NAME, "subject": subject, "annotator": "ana",
                       "action": "label", "campaign": None,
                       "payload": json.dumps({"clear": False,
                                              "note": "two readings of 'minor'"},
                                             separators=(",", ":"))}]
    assert rows(db_path, "SELECT campaign FROM campaign_subjects WHERE subject = ?",
                (subject,)) == [{"campaign": f"default:{NAME}"}]


async def test_copal_label_opens_the_fourth_suites_screen(tmp_path: Path,
                                                          registered: None) -> None:
    app = make_app(build_db(tmp_path), mode="label", suite=NAME, annotator="ana")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PolicyReviewScreen)


def test_an_unknown_suite_is_refused_by_name_everywhere(tmp_path: Path) -> None:
    db = connect(build_db(tmp_path))
    try:
        with pytest.raises(StoreError, match="unknown suite 'policy_review'"):
            AnnotationQueue(db, NAME, "ana")
    finally:
        db.conn.close()
    with pytest.raises(ValueError, match="unknown suite 'policy_review'"):
        make_app(tmp_path / "x.db", mode="label", suite=NAME)


@pytest.mark.parametrize("name", ["copal", "compass", "dialogue"])
def test_every_part_a_built_in_descriptor_names_exists(name: str) -> None:
    spec = SUITES[name]
    rules = load(spec.annotation)()
    assert rules.name == name
    assert load(spec.payload).__name__.endswith(("Label", "Review"))
    for ref in spec.screens.values():
        assert load(ref).__name__.endswith("Screen")
    assert spec.label_screen in spec.screens
    for stage in spec.stages:
        assert callable(load(stage.entry))
    assert set(spec.prompts) <= set(TASKS)
    for task in spec.prompts:
        assert (Path(__file__).parents[1] / "prompts" / f"{task}.md").is_file()
