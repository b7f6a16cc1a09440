"""Labelling campaigns through the CLI: `copal campaign create` by filter and balanced,
`list` and `show`, `copal label --campaign NAME` labelling exactly that sample with progress
"n/N of campaign NAME", and a pipeline run after an annotator started leaving their queue and
its denominator as they were (until they refresh)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.resources import sample_worlds_dir
from copal_tui.tui.app import CopalApp, make_app
from copal_tui.tui.settings import Settings
from tests.compass_tui_support import build_compass_db
from tests.tui_label_support import build_db, settle

# A response a COPAL annotator can label, by the rule stated independently of the code.
ELIGIBLE = ("FROM responses r JOIN items i ON i.id = r.item_id LEFT JOIN items p "
            "ON p.id = i.parent_item_id WHERE r.text IS NOT NULL AND r.failure IS NULL "
            "AND (i.selected = 1 OR p.selected = 1)")


def run(db: Path, *args: str, ok: bool = True) -> Any:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def q(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def members(db: Path, name: str) -> list[str]:
    return [r[0] for r in q(db, "SELECT subject FROM campaign_subjects WHERE campaign = ? "
                                "ORDER BY position", (name,))]


@pytest.fixture(scope="module")
def showcase(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("campaigns"))


def test_create_by_filter_freezes_exactly_the_matching_responses(showcase):
    out = run(showcase, "campaign", "create", "hc-a", "--world", "harbor-clinics",
              "--model", "sample/assistant-a", "--json")
    made = json.loads(out.stdout)
    expected = {r[0] for r in q(showcase, f"SELECT r.id {ELIGIBLE} AND i.world_id = ? "
                                          "AND r.model = ?", ("harbor-clinics",
                                                              "sample/assistant-a"))}
    assert set(members(showcase, "hc-a")) == expected and made["size"] == len(expected)
    assert made["suite"] == "copal" and made["spec"]["worlds"] == ["harbor-clinics"]


def test_balanced_covers_every_pattern_and_model_evenly(showcase):
    strata = dict(q(showcase, f"SELECT COALESCE(i.pattern, p.pattern) || '|' || r.model, "
                              f"COUNT(*) {ELIGIBLE} GROUP BY 1"))
    size = len(strata) + len(strata) // 2  # not a multiple: some strata get one more
    run(showcase, "campaign", "create", "audit", "--balanced", "--size", str(size))
    picked = members(showcase, "audit")
    got = Counter(stratum(showcase, rid) for rid in picked)
    assert len(picked) == size == len(set(picked))
    assert set(got) == set(strata) and max(got.values()) - min(got.values()) == 1
    # Round robin: the first len(strata) subjects already cover every stratum.
    assert {stratum(showcase, rid) for rid in picked[:len(strata)]} == set(strata)


def stratum(db: Path, rid: str) -> str:
    """A response's (pattern, model), read independently of the campaign's own column."""
    return q(db, "SELECT COALESCE(i.pattern, p.pattern) || '|' || r.model FROM responses r "
                 "JOIN items i ON i.id = r.item_id LEFT JOIN items p ON p.id = "
                 "i.parent_item_id WHERE r.id = ?", (rid,))[0][0]


def test_balanced_differs_from_the_queue_order_on_compass(tmp_path):
    db = build_compass_db(tmp_path)
    run(db, "campaign", "create", "first5", "--suite", "compass", "--size", "5")
    run(db, "campaign", "create", "even5", "--suite", "compass", "--balanced", "--size", "5")
    assert members(db, "first5") == ["r1", "r2", "r3", "r4", "r5"]  # by response id
    # Five strata (query type x model and variant): one each, so one denied edge only.
    even = members(db, "even5")
    assert sorted(even)[:4] == ["r1", "r2", "r3", "r4"] and len({"r5", "r6"} & set(even)) == 1


def test_names_are_unique_and_an_empty_sample_is_refused(showcase):
    run(showcase, "campaign", "create", "once", "--world", "meridian-bank")
    again = run(showcase, "campaign", "create", "once", ok=False)
    assert again.exit_code == 2 and "exists already" in again.output
    # Every filter names something stored, but nothing is to label (no dialogue is judged).
    empty = run(showcase, "campaign", "create", "none", "--suite", "dialogue", ok=False)
    assert empty.exit_code == 2 and "no subject matches" in empty.output
    reserved = run(showcase, "campaign", "create", "default:copal", ok=False)
    assert reserved.exit_code == 2 and "default:" in reserved.output
    mixed = run(showcase, "campaign", "create", "x", "--suite", "dialogue", "--world", "w",
                ok=False)
    assert mixed.exit_code == 2
    listed = run(showcase, "campaign", "list", "--json")
    assert "once" in {c["name"] for c in json.loads(listed.stdout)}
    assert "none" not in run(showcase, "campaign", "list").output


def test_label_campaign_starts_its_suite_and_counts_of_the_campaign(tmp_path, monkeypatch):
    db = build_compass_db(tmp_path)
    run(db, "campaign", "create", "denied", "--suite", "compass", "--pattern", "denied_base")
    started: dict[str, Any] = {}
    monkeypatch.setattr(CopalApp, "run", lambda self: started.update(
        mode=self.mode, suite=self.suite, campaign=self.campaign))
    run(db, "label", "--campaign", "denied", "--annotator", "ana")
    assert started == {"mode": "label", "suite": "compass", "campaign": "denied"}
    unknown = run(db, "label", "--campaign", "nope", ok=False)
    assert unknown.exit_code == 2 and "--campaign nope: not a campaign" in unknown.output


async def test_label_campaign_labels_exactly_the_sample(showcase):
    run(showcase, "campaign", "create", "hc-b", "--world", "harbor-clinics",
        "--model", "sample/assistant-b")
    sample = members(showcase, "hc-b")
    app = make_app(showcase, mode="label", annotator="cleo", campaign="hc-b",
                   settings=Settings(overlap=3))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert f"0/{len(sample)} of campaign hc-b" in screen.status_text
        seen = []
        while screen.rid is not None:
            seen.append(screen.rid)
            await pilot.press("c")
            await pilot.pause()
        assert f"{len(sample)}/{len(sample)} of campaign hc-b" in screen.status_text
    assert seen == sample  # all of it, in its order, and nothing else
    tags = q(showcase, "SELECT DISTINCT campaign FROM annotations WHERE annotator = 'cleo'")
    assert tags == [("hc-b",)]
    shown = json.loads(run(showcase, "campaign", "show", "hc-b", "--json").stdout)
    cleo = [a for a in shown["annotators"] if a["annotator"] == "cleo"]
    assert cleo == [{"annotator": "cleo", "labelled": len(sample), "skipped": 0,
                     "total": len(sample)}]
    assert "cleo" in run(showcase, "campaign", "show", "hc-b").output


async def status_of(db: Path, who: str, refresh: bool = False) -> str:
    app = make_app(db, mode="label", annotator=who, refresh=refresh,
                   settings=Settings(overlap=3))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        return str(app.screen.status_text)


async def test_a_pipeline_run_changes_no_started_annotators_denominator(tmp_path):
    db = tmp_path / "p.db"
    run(db, "init")
    run(db, "import", str(sample_worlds_dir() / "harbor_clinics.yaml"),
        str(sample_worlds_dir() / "harbor_clinics.jsonl"))
    before = q(db, f"SELECT COUNT(*) {ELIGIBLE}")[0][0]
    assert f"0/{before} labelled" in await status_of(db, "dora")
    run(db, "campaign", "create", "early")
    # In a thread: the stage runs its own event loop, and this test runs in one.
    await asyncio.to_thread(run, db, "run", "respond", "--world", "harbor-clinics", "--model",
                            "offline/comply-all")
    after = q(db, f"SELECT COUNT(*) {ELIGIBLE}")[0][0]
    assert after > before  # the run answered every selected item once more
    # dora started before the run: her queue and its denominator are as they were.
    assert f"0/{before} labelled" in await status_of(db, "dora")
    # Someone starting now gets what is there now; dora gets it when she asks.
    assert f"0/{after} labelled" in await status_of(db, "eve")
    assert f"0/{after} labelled" in await status_of(db, "dora", refresh=True)
    assert f"0/{after} labelled" in await status_of(db, "dora")  # and keeps it
    # A campaign drawn before the run is as it was drawn.
    shown = json.loads(run(db, "campaign", "show", "early", "--json").stdout)
    assert shown["campaign"]["size"] == before
