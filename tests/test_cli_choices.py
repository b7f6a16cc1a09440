"""One spelling rule for every fixed choice of every command: `full-policy`, `full_policy` and
`Full-Policy` are the same judge mode wherever a mode is taken, and the value stored is the
choice as copal writes it."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from copal_tui.cli import main
from copal_tui.tui.app import make_app
from tests.db_support import copy_db, query_rows
from tests.sample_store_support import build_judged_store, copal, ok
from tests.test_tui_browse_data import settle
from tests.test_tui_cases import cases_rows, until


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_judged_store(tmp_path_factory.mktemp("choices"))


@pytest.fixture
def store(judged: Path, tmp_path: Path) -> Path:
    return copy_db(judged, tmp_path / "copy.db")


def test_report_and_cases_take_the_mode_as_run_does(judged):
    doc = json.loads(ok(copal(judged, "report", "--json", "--bootstrap", "0",
                              "--judge-mode", "full-policy")).stdout)
    assert doc["scope"]["primary_judge"] == {"judge": "offline/judge", "mode": "full_policy"}
    rows = ok(copal(judged, "cases", "--mode", "full-policy", "--format", "jsonl")).stdout
    records = [json.loads(line) for line in rows.splitlines()]
    assert records and {r["mode"] for r in records} == {"full_policy"}
    doc = json.loads(ok(copal(judged, "report", "--json", "--bootstrap", "0",
                              "--reference-judge", "offline/judge@full-policy")).stdout)
    assert doc["scope"]["reference_judge"] == {"judge": "offline/judge", "mode": "full_policy"}


def test_run_stores_the_mode_as_copal_writes_it(store):
    ok(copal(store, "run", "judge", "--world", "harbor-clinics", "--judge", "offline/judge",
             "--mode", "Full-Policy"))
    [row] = query_rows(store, "SELECT manifest FROM runs ORDER BY rowid DESC LIMIT 1")
    assert json.loads(row["manifest"])["options"]["copal"]["modes"] == ["full_policy"]


def test_stages_suites_and_other_commands_choices_are_spelled_the_same_way(store):
    ok(copal(store, "run", "Dialogue-Judge", "--judge", "offline/judge", "--dialogue",
             "clinic/conversation_00001", "--attempts", "1"))
    assert query_rows(store, "SELECT COUNT(*) FROM dialogue_attempts")[0][0] == 1
    ok(copal(store, "campaign", "create", "one", "--suite", "COPAL", "--size", "1"))
    assert query_rows(store, "SELECT suite FROM campaigns WHERE name = 'one'")[0][0] == "copal"
    assert json.loads(ok(copal(store, "schema", "--kind", "World")).stdout)["title"]


def test_a_choice_that_is_none_names_the_closest_one(judged):
    result = copal(judged, "cases", "--mode", "full-polcy")
    assert result.exit_code == 2 and "Did you mean 'full_policy'?" in result.stderr


def _commands(group: click.Group, ctx: click.Context) -> list[click.Command]:
    found = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        found.append(cmd)
        if isinstance(cmd, click.Group):
            found += _commands(cmd, ctx)
    return found


def _spellings(choice: str) -> set[str]:
    return {choice.replace("_", "-"), choice.replace("-", "_"), choice.upper()}


def test_every_choice_of_every_command_takes_each_spelling():
    ctx = click.Context(main)
    checked = 0
    for cmd in _commands(main, ctx):
        for param in cmd.params:
            if not isinstance(param.type, click.Choice):
                continue
            for choice in map(str, param.type.choices):
                for typed in _spellings(choice):
                    assert param.type.convert(typed, param, ctx) == choice, (cmd.name, typed)
                    checked += 1
    assert checked > 50  # modes, formats, suites, stages, variants, import sources, ...


async def test_the_cases_list_filter_takes_the_mode_the_same_way(store):
    async with make_app(store).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.action_open("cases")
        await until(pilot, lambda: cases_rows(pilot), "the list")
        await pilot.press("slash", "ctrl+u", *"judge:offline/judge@full-policy", "enter")
        page = await until(pilot, lambda: (pilot.app.screen.table.page.setting[1]
                                           == "full_policy" and pilot.app.screen.table.page),
                           "the full-policy list")
        assert page.setting == ("offline/judge", "full_policy") and page.total > 0
        assert pilot.app.screen.table.error is None
