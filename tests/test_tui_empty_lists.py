"""Paged lists with no rows (a store without dialogues): the table's cursor highlights no row,
and moving or selecting must leave the app running on the same screen (Textual sends the
highlight with no row key then; the list once raised on it and the app died)."""

from __future__ import annotations

import sqlite3

from copal_tui.tui import app as app_module
from copal_tui.tui.app import make_app
from copal_tui.tui.widgets.paged_table import PagedTable


async def test_keys_in_an_empty_paged_list_keep_the_app_running(initialised, monkeypatch):
    conn = sqlite3.connect(initialised)
    assert conn.execute("SELECT COUNT(*) FROM dialogues").fetchone()[0] == 0
    conn.close()
    monkeypatch.setitem(app_module.START, "browse", "dialogues")
    app = make_app(initialised)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one(PagedTable)
        table.query_one("DataTable").focus()
        await pilot.press("down", "up", "enter", "down")
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert app.screen is screen
