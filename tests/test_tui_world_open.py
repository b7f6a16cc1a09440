"""Pilot tests of opening the browse screens quickly: a tab key typed as a world opens lands on
that tab, a world builds a tab's list when the tab is first shown, and the worlds list is read
once as the app starts (again on coming back), each asserted against the database rows shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copal_tui.services import browse
from copal_tui.tui.app import make_app
from copal_tui.tui.screens.world import WorldScreen
from copal_tui.tui.widgets.paged_table import PagedTable
from store.db import connect
from tests import test_tui_browse_data as data
from tests.test_tui_browse_data import W, settle

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template


def column(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    db = connect(db_path)
    try:
        return [r[0] for r in db.execute(sql, params)]
    finally:
        db.conn.close()


def lists(pilot: Any) -> list[str]:
    return [t.id for t in pilot.app.screen.query(PagedTable)]


async def test_a_tab_key_typed_as_the_world_opens_lands_on_that_tab(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.screen.query_one(PagedTable).select_key(W)
        # No pause between the two keys: the world's first list takes the keyboard while the
        # `4` is on its way, which used to switch the tabs back to the first one.
        await pilot.press("enter", "4")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, WorldScreen)
        items = screen.query_one("#items-table", PagedTable)
        assert screen.active_table() is items
        assert pilot.app.focused is items.table
        assert items.row_keys() == column(
            browse_db, "SELECT id FROM items WHERE world_id = ? ORDER BY rowid", (W,))


async def test_a_world_builds_each_list_when_its_tab_is_first_shown(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.action_open("world", world_id=W)
        await settle(pilot)
        assert lists(pilot) == ["policies-table"]
        await pilot.press("3")
        await settle(pilot)
        assert lists(pilot) == ["policies-table", "compositions-table"]
        compositions = pilot.app.screen.query_one("#compositions-table", PagedTable)
        assert pilot.app.focused is compositions.table
        assert compositions.row_keys() == column(
            browse_db, "SELECT id FROM compositions WHERE world_id = ? ORDER BY rowid", (W,))
        await pilot.press("1")
        await settle(pilot)
        assert lists(pilot) == ["policies-table", "compositions-table"]  # kept, not rebuilt
        assert pilot.app.focused is pilot.app.screen.query_one("#policies-table",
                                                               PagedTable).table


async def test_the_worlds_list_is_read_once_at_start_and_again_on_return(
        browse_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = browse.worlds_page

    def counted(db: Any, req: Any) -> Any:
        calls.append(req.offset)
        return real(db, req)

    monkeypatch.setattr(browse, "worlds_page", counted)
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = pilot.app.screen.query_one(PagedTable)
        assert table.row_keys() == column(browse_db, "SELECT id FROM worlds ORDER BY id")
        assert calls == [0]
        pilot.app.action_open("world", world_id=W)
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        # Back from a world: labels or jobs may have changed the counts, so it re-reads.
        assert calls == [0, 0]
        assert pilot.app.screen.query_one(PagedTable).row_keys() == column(
            browse_db, "SELECT id FROM worlds ORDER BY id")
