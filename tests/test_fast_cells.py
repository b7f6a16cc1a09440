"""FastCells draws plain one-line cells itself: its segments must be exactly DataTable's (through
Rich), for every justification, width, style, cursor and hover state, or the lists would look
different from what the snapshots and users know."""

from __future__ import annotations

import random
import string

import pytest
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from copal_tui.tui.widgets.fast_cells import FastCells

pytestmark = pytest.mark.asyncio

_JUSTIFY = ["left", "right", "center", "default", None]
_STYLES = [Style(), Style(bgcolor="red"), Style(color="blue", bold=True, italic=True)]


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        yield FastCells(cursor_type="row", zebra_stripes=True)


def _rich(table: FastCells, *args: object) -> object:
    """DataTable's own rendering of a cell, from an empty cache."""
    table._cell_render_cache.clear()
    return DataTable._render_cell(table, *args)  # type: ignore[arg-type]


def _fast(table: FastCells, *args: object) -> object:
    table._cell_render_cache.clear()
    return table._render_cell(*args)  # type: ignore[arg-type]


def _compare(table: FastCells, rows: int, widths: list[int]) -> int:
    """Compare every cell in every state; returns how many were compared."""
    compared = 0
    for r in range(rows):
        for c, width in enumerate(widths):
            for cursor in (False, True):
                for hover in (False, True):
                    for base in _STYLES:
                        args = (r, c, base, width + 2, cursor, hover)
                        assert _fast(table, *args) == _rich(table, *args), (
                            r, c, table.get_cell_at((r, c)), cursor, hover, base)
                        compared += 1
    return compared


async def test_random_plain_cells_are_drawn_as_rich_draws_them() -> None:
    rng = random.Random(20261201)
    widths = [rng.randint(1, 18) for _ in range(8)]
    app = _Table()
    async with app.run_test(size=(200, 60)) as pilot:
        table = app.query_one(FastCells)
        for i, width in enumerate(widths):
            table.add_column(Text(f"c{i}", justify=rng.choice(["left", "right"])), key=f"c{i}",
                             width=width)
        alphabet = string.printable[:95] + "\u2026" * 3 + "   "
        for r in range(30):
            cells = []
            for width in widths:
                n = rng.randint(0, width)
                cells.append(Text("".join(rng.choice(alphabet) for _ in range(n)),
                                  justify=rng.choice(_JUSTIFY)))  # type: ignore[arg-type]
            table.add_row(*cells, key=f"r{r}")
        await pilot.pause()
        assert _compare(table, 30, widths) == 30 * len(widths) * 12


async def test_edge_cells_match_and_cells_it_cannot_draw_go_through_rich() -> None:
    cells = [
        Text(""), Text("exact", justify="left"), Text("  pad  ", justify="right"),
        Text("  pad  ", justify="center"), Text("x\u2026", justify="center"),
        # Not plain: a style or span of its own, a wide character, a control, too long.
        Text("styled", style="bold"), Text.assemble(("a", "red"), "b"), Text("\u4e2d\u6587"),
        Text("tab\there"), Text("far too long for it"),
    ]
    app = _Table()
    async with app.run_test(size=(200, 20)) as pilot:
        table = app.query_one(FastCells)
        for i in range(len(cells)):
            table.add_column(f"c{i}", key=f"c{i}", width=5)
        table.add_row(*cells, key="r0")
        await pilot.pause()
        assert _compare(table, 1, [5] * len(cells)) == len(cells) * 12


async def test_a_cell_it_draws_is_found_in_the_cache_datatable_reads() -> None:
    app = _Table()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(FastCells)
        table.add_column("a", key="a", width=6)
        table.add_row(Text("abc"), key="r0")
        await pilot.pause()
        table._cell_render_cache.clear()
        drawn = table._render_cell(0, 0, Style(), 8)
        # DataTable's own renderer now answers from the cache: the very same object.
        assert DataTable._render_cell(table, 0, 0, Style(), 8) is drawn
