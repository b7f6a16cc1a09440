"""Untrusted text renders literally: Rich markup is shown as typed, ANSI/OSC/C1 escape sequences
and control characters are removed, bidi controls are made visible. Checked on the helpers and
on the real screens (item view, response table, paged table cells, record modal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from copal_tui.tui.app import make_app
from copal_tui.tui.safe import clean, one_line, safe
from copal_tui.tui.screens.item import ItemScreen
from copal_tui.tui.widgets.paged_table import Column, PagedTable, parse_filter
from copal_tui.tui.widgets.response_view import ResponseView, highlight
from tests import test_tui_browse_data as data
from tests.test_tui_browse import text_of
from tests.test_tui_browse_data import EVIL_ID, EVIL_TEXT, W

# Shared fixtures (aliases keep them out of the import list, where they would shadow).
browse_db = data.browse_db
browse_template = data.browse_template

CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + \
    [chr(c) for c in range(0x7F, 0xA0)]


def assert_literal(shown: str) -> None:
    assert "[bold red]FAKE[/bold red]" in shown
    assert "[link=http://x.example]click[/link]" in shown
    assert "red" in shown and "link" in shown and "end" in shown
    assert "pwned" not in shown  # the OSC title payload goes with its sequence
    assert "evil.example" not in shown  # so does the OSC 8 hyperlink target
    assert "\u27e6U+202E\u27e7evil\u27e6U+202C\u27e7" in shown
    assert not [c for c in shown if c in CONTROL], repr(shown)
    assert "\u202e" not in shown and "\u202c" not in shown


def test_safe_keeps_markup_literal_and_strips_escapes() -> None:
    text = safe(EVIL_TEXT)
    assert isinstance(text, Text) and not text.spans  # nothing was interpreted as style
    assert_literal(text.plain)
    assert clean("a\r\nb\rc") == "a\nb\nc"
    assert clean("\x1bPq#0;1;1\x1b\\sixel") == "sixel"  # DCS (sixel graphics) removed whole
    assert one_line("x\n[b]y[/b]\x1b[1m z") == "x [b]y[/b] z"


def test_filter_words_and_keys_are_parsed_without_markup() -> None:
    assert parse_filter('strep facet:over_refusal note:"two words" [b]') == (
        "strep [b]", {"facet": "over_refusal", "note": "two words"})


def test_evidence_highlight_is_a_style_never_markup() -> None:
    body, found = highlight("say [b]hi[/b] \x1b[31mnow", {"F1": "[b]hi[/b] \x1b[0mnow"}, {"F1"})
    assert body.plain == "say [b]hi[/b] now"
    assert found == [("F1", "[b]hi[/b] now", True)]
    assert [(s.start, s.end) for s in body.spans] == [(4, 17)]


def test_paged_table_cells_are_text_not_markup() -> None:
    table = PagedTable(lambda db, req: None, [Column("query", "q")])  # type: ignore[arg-type]
    cell = table._cell(Column("query", "q"), {"query": EVIL_TEXT}, 300)
    assert isinstance(cell, Text) and not cell.spans
    assert_literal(cell.plain)


async def test_hostile_response_renders_literally_on_the_item_screen(browse_db: Path) -> None:
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pilot.app.action_open("item", item_id=f"{W}:I02", tab="responses")
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ItemScreen)
        table: DataTable[Any] = screen.query_one("#responses-table", DataTable)
        row = [r["id"] for r in screen.responses].index(EVIL_ID)
        table.move_cursor(row=row)
        await pilot.pause()
        shown = text_of(screen.query_one(ResponseView).content, width=400)
        assert_literal(shown)
        # The judge's rationale carries "[/]" (a markup error if parsed) and a clear-screen.
        assert "[/] [bold]not bold[/bold] cleared?" in shown
        # And what reaches the terminal: the whole screen as the user sees it.
        svg = pilot.app.export_screenshot()
        assert "pwned" not in svg and "evil.example" not in svg
        assert "[bold&#160;red]FAKE[/bold&#160;red]" in svg or \
            "[bold red]FAKE[/bold red]" in svg


async def test_hostile_query_in_a_list_cell_and_record(browse_db: Path, tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from copal_tui.cli import main
    from tests.test_tui_browse_data import settle

    hostile = {"type": "item", "id": f"{W}:evil", "world_id": W, "composition_id": None,
               "pattern": None, "facet": None, "query": EVIL_TEXT,
               "required": [{"id": "R1", "text": "[red]x[/red]", "kind": "content",
                             "clause_id": f"{W}:C01"}],
               "forbidden": [], "method": "manual", "parent_item_id": None, "selected": False}
    extra = tmp_path / "evil.jsonl"
    extra.write_text(json.dumps(hostile) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--db", str(browse_db), "import", str(extra)])
    assert result.exit_code == 0, result.output
    async with make_app(browse_db).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pilot.app.action_open("world", world_id=W, tab="items")
        await settle(pilot)
        items = pilot.app.screen.query_one("#items-table", PagedTable)
        await pilot.press("slash", *"evil", "enter")
        await settle(pilot)
        assert items.row_keys() == [f"{W}:evil"]
        row = items.table.get_row(f"{W}:evil")
        assert all(isinstance(c, Text) for c in row)
        query_cell = row[-1].plain
        assert query_cell.startswith("[bold red]FAKE")
        assert one_line(EVIL_TEXT, 1000).startswith(query_cell.rstrip("\u2026"))
        assert not [c for c in query_cell if c in CONTROL]
        await pilot.press("enter")
        await pilot.pause()
        overview = text_of(pilot.app.screen.query_one("#overview-body").content, width=400)
        assert_literal(overview)
        assert "R1 [content] [red]x[/red]" in overview
