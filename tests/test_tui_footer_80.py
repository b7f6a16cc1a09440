"""At 80x24 the footer of the COMPASS screens (the world screen's COMPASS tab and a COMPASS query,
both of its tabs) shows every key it lists: nothing is hidden under the command-palette hint
at the right edge. Keys moved off the footer stay in `?` help.

What is on screen is read from `app.export_screenshot()` (the SVG's text runs of the last line).
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from copal_tui.tui.app import make_app
from copal_tui.tui.screens.compass_query import CompassQueryScreen
from copal_tui.tui.screens.help import binding_rows
from tests.compass_tui_support import W, build_compass_db
from tests.test_tui_browse_data import settle
from tests.test_tui_compass_browse import compass_table, open_world

SIZE = (80, 24)


def screen_lines(app: Any) -> list[str]:
    """The terminal's lines as text, from the screenshot's text runs."""
    svg = app.export_screenshot()
    lines: dict[int, list[str]] = {}
    for m in re.finditer(r'<text[^>]*clip-path="url\(#[^)]*-line-(\d+)\)"[^>]*>(.*?)</text>',
                         svg, flags=re.S):
        lines.setdefault(int(m.group(1)), []).append(html.unescape(m.group(2)))
    return ["".join(lines.get(n, [])).replace("\xa0", " ") for n in range(app.size.height)]


def footer_entries(app: Any) -> list[tuple[str, list[str]]]:
    """(description, key displays) of every binding the footer lists, one per action."""
    entries: dict[tuple[str, str], list[str]] = {}
    for active in app.screen.active_bindings.values():
        binding = active.binding
        if binding.show and not binding.system:
            keys = entries.setdefault((binding.action, binding.description), [])
            keys.append(app.get_key_display(binding))
    return [(description, keys) for (_, description), keys in entries.items()]


def assert_footer_whole(app: Any) -> str:
    footer = screen_lines(app)[-1]
    entries = footer_entries(app)
    assert entries, "the footer lists no keys"
    for description, keys in entries:
        assert any(f"{key} {description}" in footer for key in keys), (description, footer)
    assert "^p palette" in footer
    return footer


@pytest.fixture
def db(tmp_path):
    return build_compass_db(tmp_path)


async def test_world_compass_tab_footer_fits_80_columns(db):
    async with make_app(db).run_test(size=SIZE) as pilot:
        screen = await open_world(pilot, W)
        await pilot.press("6")
        await settle(pilot)
        footer = assert_footer_whole(pilot.app)
        assert "b Back" in footer and "q Quit" in footer and "? Keys" in footer
        # Related left the footer for the help screen (and the palette), not the app.
        assert "Related" not in footer
        rows = {r[3]: r for r in binding_rows(screen)}
        assert rows["world.related"][1] == "r" and "esc" in rows["browse.back"][1]


async def test_compass_query_footer_fits_80_columns_on_both_tabs(db):
    async with make_app(db).run_test(size=SIZE) as pilot:
        await open_world(pilot, W)
        await pilot.press("6")
        await settle(pilot)
        compass_table(pilot).select_key("q3")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, CompassQueryScreen)
        for tab in ("1", "2"):
            await pilot.press(tab)
            await settle(pilot)
            footer = assert_footer_whole(pilot.app)
            assert "] Next resp." in footer and "b Back" in footer
        await pilot.press("b")
        await settle(pilot)
        assert not isinstance(pilot.app.screen, CompassQueryScreen)


# -------------------------------------------------------------- the labelling queues

COMMON_FOOTER = ["\u23ce submit", "u undo", "s skip", "n/p move", "e note", "f flag", "q quit",
                 "PgUp/Dn scroll", "? Keys"]


def _queue_app(kind: str, tmp_path: Any) -> Any:
    from copal_tui.tui.settings import Settings
    from tests.dialogue_tui_support import build_dialogue_db
    from tests.tui_label_support import build_db

    if kind == "adjudicate":
        return make_app(build_db(tmp_path), mode="adjudicate", annotator="lead")
    db = {"copal": build_db, "compass": build_compass_db,
          "dialogue": build_dialogue_db}[kind](tmp_path)
    return make_app(db, mode="label", suite=kind, annotator="cleo",
                    settings=Settings(overlap=3))


@pytest.mark.parametrize("kind", ["copal", "compass", "dialogue", "adjudicate"])
async def test_every_queue_footer_shows_every_common_key_at_80_columns(kind, tmp_path):
    app = _queue_app(kind, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = screen_lines(app)[-1]
        for entry in COMMON_FOOTER:
            assert entry in footer, (kind, entry, footer)
        # Nothing cut at the right edge: the last entry ends inside the 80 columns.
        assert len(footer.rstrip()) <= SIZE[0]
