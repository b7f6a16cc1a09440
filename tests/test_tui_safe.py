"""Untrusted text renders literally: Rich markup is shown as typed; a short terminated ANSI/OSC/C1
escape sequence is replaced by a visible ␛ (its payload, e.g. a window title, is not shown),
while a lone ESC or an unterminated sequence shows ␛ and keeps every character after it; other
controls become Control Pictures, bidi, zero-width and tag characters `⟦U+XXXX⟧`. Checked on the
helpers (with property tests) and on the real screens (item view, response table, paged table
cells, record modal)."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text
from textual.widgets import DataTable

from copal_tui.tui.app import make_app
from copal_tui.tui.safe import clean, one_line, safe
from copal_tui.tui.screens.item import ItemScreen
from copal_tui.tui.widgets.paged_table import Column, PagedTable, parse_filter
from copal_tui.tui.widgets.response_view import ResponseView, highlight
from copal_tui.tui.widgets.table_columns import cell as table_cell
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
    # ... but a marker shows where each sequence was (colour, title, link, 8-bit CSI).
    assert "\u241bred\u241b \u241b\u241blink\u241b" in shown and "end \u241b" in shown
    assert "\u27e6U+202E\u27e7evil\u27e6U+202C\u27e7" in shown
    assert not [c for c in shown if c in CONTROL], repr(shown)
    assert "\u202e" not in shown and "\u202c" not in shown


def test_safe_keeps_markup_literal_and_strips_escapes() -> None:
    text = safe(EVIL_TEXT)
    assert isinstance(text, Text) and not text.spans  # nothing was interpreted as style
    assert_literal(text.plain)
    assert clean("a\r\nb\rc") == "a\nb\u240dc"  # a lone CR (overwrite the line) shows as ␍
    assert clean("\x1bPq#0;1;1\x1b\\sixel") == "\u241bsixel"  # DCS (sixel) collapsed to ␛
    assert one_line("x\n[b]y[/b]\x1b[1m z") == "x [b]y[/b]\u241b z"


def test_unterminated_or_long_sequences_are_shown_not_swallowed() -> None:
    rest = " and the rest of the answer, which the annotator must read."
    assert clean(f"Sure:\x1b]0;never closed{rest}") == f"Sure:\u241b]0;never closed{rest}"
    assert clean(f"Sure:\x1bP dcs open{rest}") == f"Sure:\u241bP dcs open{rest}"
    assert clean(f"\x9d8-bit OSC{rest}") == f"\u27e6U+009D\u27e78-bit OSC{rest}"
    assert clean(f"lone \x1b{rest}") == f"lone \u241b{rest}"
    assert clean("\x1bc reset") == "\u241bc reset"  # two-character escapes are inert too
    # A "terminated" sequence may not hide a paragraph: long or multi-line ones are shown.
    long = "x" * 300
    assert clean(f"\x1b]0;{long}\x07after") == f"\u241b]0;{long}\u2407after"
    assert clean("\x1b]0;line one\nline two\x07") == "\u241b]0;line one\nline two\u2407"


def test_invisible_characters_are_marked_never_dropped() -> None:
    for cp in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x202E, 0x2066, 0x200F, 0x2028):
        assert clean(f"a{chr(cp)}b") == f"a\u27e6U+{cp:04X}\u27e7b"
    assert clean("tag\U000e0041\U000e007f") == "tag\u27e6U+E0041\u27e7\u27e6U+E007F\u27e7"
    assert clean("bell\x07 nul\x00 del\x7f") == "bell\u2407 nul\u2400 del\u2421"
    assert clean("tab\tand\nnewline") == "tab\tand\nnewline"


BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
ZERO_WIDTH = set("\u200b\u200c\u200d\u2060\ufeff")


def forbidden(c: str) -> bool:
    """What must never reach the screen, stated independently of the implementation."""
    cp = ord(c)
    return (c in CONTROL or c in BIDI or c in ZERO_WIDTH or 0xE0000 <= cp <= 0xE007F
            or unicodedata.category(c) == "Cs")


def ordinary(c: str) -> bool:
    """Printable and not one of the supplementary variation selectors (U+E0100-U+E01EF), which
    are invisible, can carry a hidden payload one byte per character, and are shown marked."""
    return c.isprintable() and not 0xE0100 <= ord(c) <= 0xE01EF


# Text rich in what the sanitiser must handle: introducers, terminators, parameters and the
# invisible characters, mixed with any Unicode character.
SPECIALS = ["\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\x90", "[", "]", "\\", ";", "0", "2",
            "m", "J", "P", "\r", "\n", "\t", "\u202e", "\u200b", "\U000e0041", "\x00", "\x7f"]
HOSTILE_TEXT = st.text(st.one_of(st.sampled_from(SPECIALS), st.characters()), max_size=80)
PRINTABLE = st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl",
                                                       "Zp")), max_size=40)


def subsequence(needle: list[str], hay: str) -> bool:
    it = iter(hay)
    return all(c in it for c in needle)


@given(HOSTILE_TEXT)
def test_property_nothing_unsafe_reaches_the_screen(text: str) -> None:
    shown = clean(text)
    assert not [c for c in shown if forbidden(c)], repr(shown)
    assert not [c for c in one_line(text, 1000) if forbidden(c)]
    # A sequence hides a bounded amount (never "the rest of the response"): at most its
    # introducer, 32 + 8 parameter bytes or a 256-character body, and a terminator.
    introducers = sum(text.count(c) for c in "\x1b\x90\x98\x9b\x9d\x9e\x9f")
    assert len(shown) >= sum(map(ordinary, text)) - 300 * introducers


@given(HOSTILE_TEXT.map(lambda t: "".join(c for c in t if c != "\x1b" and
                                          not 0x80 <= ord(c) <= 0x9f)))
def test_property_without_escapes_every_printable_character_is_kept(text: str) -> None:
    shown = clean(text)
    kept = [c for c in text if ordinary(c)]
    assert len(shown) >= len(kept) and subsequence(kept, shown)


@given(HOSTILE_TEXT, PRINTABLE)
def test_property_an_unterminated_osc_keeps_the_text_after_it(prefix: str, tail: str) -> None:
    # (The tail has no control; clean(tail) differs from it only by marked invisible ones.)
    assert clean(f"{prefix}\x1b]{tail}").endswith(f"\u241b]{clean(tail)}")


def test_filter_words_and_keys_are_parsed_without_markup() -> None:
    assert parse_filter('strep facet:over_refusal note:"two words" [b]') == (
        "strep [b]", {"facet": "over_refusal", "note": "two words"})


def test_evidence_highlight_is_a_style_never_markup() -> None:
    body, found = highlight("say [b]hi[/b] \x1b[31mnow", {"F1": "[b]hi[/b] \x1b[0mnow"}, {"F1"})
    assert body.plain == "say [b]hi[/b] \u241bnow"  # both sequences collapse to the same ␛
    assert found == [("F1", "[b]hi[/b] \u241bnow", True)]
    assert [(s.start, s.end) for s in body.spans] == [(4, 18)]


def test_paged_table_cells_are_text_not_markup() -> None:
    # What the table puts in a cell (copal_tui.tui.widgets.table_columns.cell).
    cell = table_cell(Column("query", "q"), {"query": EVIL_TEXT}, 300)
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
        row = [r.id for r in screen.responses].index(EVIL_ID)
        table.move_cursor(row=row)
        await pilot.pause()
        shown = text_of(screen.query_one(ResponseView).content, width=400)
        assert_literal(shown)
        # The judge's rationale carries "[/]" (a markup error if parsed) and a clear-screen.
        assert "[/] [bold]not bold[/bold] \u241bcleared?" in shown
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
