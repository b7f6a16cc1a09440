"""What `copal tui` does as it starts and as lists open, asserted on what it shows and loads:
the command line imports only the command it runs, the worlds list fills in its slow columns
in place, and the footer shows the keys of whatever has the keyboard."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.tui.app import make_app
from copal_tui.tui.widgets.paged_table import PagedTable
from store.db import Database, OverBudget, connect
from tests import test_tui_browse_data as data
from tests.test_tui_browse_data import W, settle

browse_db = data.browse_db
browse_template = data.browse_template

COMMAND_MODULES = ("store_cmds", "report_cmds", "run_cmds", "demo_cmd", "campaign_cmds",
                   "cases_cmds", "tui_cmds")


def _one(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    db = connect(db_path)
    try:
        return db.execute(sql, params).fetchone()[0]
    finally:
        db.conn.close()


def test_naming_a_command_imports_that_command_alone() -> None:
    code = (
        "import sys\n"
        "from copal_tui.cli import main\n"
        "import click\n"
        "ctx = click.Context(main)\n"
        "assert main.get_command(ctx, 'tui') is not None\n"
        "print(','.join(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
        "                      if m.startswith('copal_tui.commands.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    # context and choices are the commands' shared helper modules, which tui_cmds imports;
    # registration is how the group registers every command it loads.
    assert out.stdout.strip() == "choices,context,registration,tui_cmds"


def test_help_still_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:", 1)[1]
    for name in ("adjudicate", "backup", "campaign", "cases", "demo", "export", "import",
                 "init", "label", "migrate", "report", "run", "runs", "schema", "serve",
                 "stats", "tui"):
        assert f"  {name} " in listed, name


def test_an_unknown_command_is_still_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


async def test_worlds_list_fills_its_slow_columns_into_the_shown_rows(browse_db: Path) -> None:
    responses = _one(browse_db, "SELECT COUNT(*) FROM responses r JOIN items i "
                                "ON i.id = r.item_id WHERE i.world_id = ?", (W,))
    labelled = _one(browse_db, "SELECT COUNT(DISTINCT l.subject) FROM current_annotations l "
                               "JOIN responses r ON r.id = l.subject JOIN items i "
                               "ON i.id = r.item_id WHERE l.suite = 'copal' "
                               "AND l.role = 'annotator' AND i.world_id = ?", (W,))
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = pilot.app.screen.query_one(PagedTable).table
        assert table.get_cell(W, "labelled").plain == f"{labelled}/{responses}"
        assert table.get_cell(W, "responses").plain == str(responses)
        shown = [table.get_cell(W, c.key).plain for c in table.columns.values()]
        assert "\u2026" not in shown  # no cell is still waiting for its value


def _footer_keys(pilot: Any) -> list[str]:
    from textual.widgets._footer import FooterKey

    return [k.description for k in pilot.app.screen.query(FooterKey) if k.description]


async def test_the_footer_follows_the_focus_between_rows_and_filter(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert set(_footer_keys(pilot)) >= {"Open", "Filter", "Next page", "Keys", "Quit"}
        await pilot.press("slash")  # the filter line takes the keyboard: no row to open
        await settle(pilot)
        assert "Open" not in _footer_keys(pilot)
        await pilot.press("down")  # back to the rows
        await settle(pilot)
        assert "Open" in _footer_keys(pilot)


def _page_loads(monkeypatch: Any) -> list[str]:
    """Record how each page worker started: "read" (it reads the page) or "shown" (the page
    was read inline and the worker only fills in the slow columns)."""
    calls: list[str] = []
    load = PagedTable._load

    def spy(self: PagedTable, app: Any, req: Any, shown: Any = None) -> Any:
        calls.append("read" if shown is None else "shown")
        return load(self, app, req, shown)

    monkeypatch.setattr(PagedTable, "_load", spy)
    return calls


async def test_the_first_page_is_read_inline_when_quick(
        browse_db: Path, monkeypatch: Any) -> None:
    calls = _page_loads(monkeypatch)
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = pilot.app.screen.query_one(PagedTable)
        assert W in table.row_keys()
        assert calls == ["shown"]  # no worker read the page: only the slow columns


async def test_a_first_page_over_its_time_budget_is_read_by_the_worker(
        browse_db: Path, monkeypatch: Any) -> None:
    calls = _page_loads(monkeypatch)

    @contextmanager
    def over_budget(self: Database, seconds: float) -> Iterator[Database]:
        raise OverBudget(f"not done within {seconds:g} s")
        yield self  # pragma: no cover - a generator, as the real one

    monkeypatch.setattr(Database, "within", over_budget)
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = pilot.app.screen.query_one(PagedTable)
        assert W in table.row_keys()
        assert calls == ["read"]


async def test_a_start_with_the_garbage_collector_off_turns_it_back_on(
        browse_db: Path) -> None:
    """`copal tui` starts with the cyclic collector off; the app turns it on (with the start-up
    objects frozen) once its first screen is painted, so a session never runs without it."""
    gc.disable()
    try:
        async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
            for _ in range(100):
                await pilot.pause()
                if gc.isenabled():
                    break
            assert gc.isenabled()
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


async def test_a_pilot_begins_on_the_first_screen_with_its_rows(browse_db: Path) -> None:
    # The first screen is pushed once Textual has started; a test's pilot still begins on it,
    # mounted and holding its first page, as a user's first key finds it.
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        assert type(screen).__name__ == "WorldsScreen" and screen.is_mounted
        assert W in screen.query_one(PagedTable).row_keys()


async def test_the_first_screen_is_never_laid_out_inside_textual_s_start_up_batch(
        browse_db: Path, monkeypatch: Any) -> None:
    # What is drawn inside the batch never reaches the terminal: laying the screen out there
    # was work thrown away, and its rows waited for the batch to end.
    from textual.screen import Screen

    layouts: list[tuple[str, int]] = []
    refresh_layout = Screen._refresh_layout

    def spy(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        layouts.append((type(self).__name__, self.app._batch_count))
        refresh_layout(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", spy)
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
    worlds = [batch for name, batch in layouts if name == "WorldsScreen"]
    assert worlds and all(batch == 0 for batch in worlds)
