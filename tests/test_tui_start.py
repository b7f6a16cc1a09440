"""What `copal tui` does as it starts and as lists open, asserted on what it shows and loads:
the command line imports only the command it runs, the worlds list fills in its slow columns
in place, and the footer shows the keys of whatever has the keyboard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.tui.app import make_app
from copal_tui.tui.widgets.paged_table import PagedTable
from store.db import connect
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
    # context is the commands' shared helper module, which tui_cmds imports.
    assert out.stdout.strip() == "context,tui_cmds"


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
