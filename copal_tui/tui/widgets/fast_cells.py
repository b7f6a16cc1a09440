"""A DataTable that draws its plain one-line cells without going through Rich.

DataTable renders every cell through Rich (`Styled(Padding(cell))` and `console.render_lines`):
0.14-0.2 ms a cell here, so a list page of 21 rows and 11 columns spent 45-80 ms of its first
paint on its cells alone; drawn here, a cell takes about a quarter of that. Nearly every cell
copal puts in a list is a one-line `Text` of plain characters, no spans and no style of its own
(`copal_tui.tui.safe`), whose segments are simple to write directly: the padding, the text
justified within the column, the padding, all in the one style DataTable would give them. This
class does that for such cells, producing the very segments Rich would (a test compares the two
over random cells, styles, cursor and hover states), and leaves every other cell (the header,
styled or wide text, cells too long for their column, auto-height rows, fixed rows and columns)
to DataTable.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._types import SegmentLines
from textual.widgets import DataTable

# Characters one terminal cell wide, drawn as themselves: printable ASCII and the ellipsis that
# `one_line` ends a shortened cell with. A cell holding anything else goes through Rich.
_NARROW = frozenset(map(chr, range(0x20, 0x7F))) | {"\u2026"}
_JUSTIFY = ("default", "left", "right", "center")


class FastCells(DataTable[Any]):
    """DataTable with a direct renderer for plain one-line cells."""

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> SegmentLines:
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if (row_key is None or column_key is None or row_index < self.fixed_rows
                or column_index < self.fixed_columns):
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        # DataTable's own cache key, so an entry either renderer made serves both.
        key = (row_key, column_key, base_style, cursor, hover, self._show_hover_cursor,
               self._update_count, self._pseudo_class_state)
        cached = self._cell_render_cache.get(key)
        if cached is not None:
            return cached
        cell = self._get_row_renderables(row_index).cells[column_index]
        inner = width - 2 * self.cell_padding
        row = self.rows.get(row_key)
        if (row is None or row.height != 1 or type(cell) is not Text or cell._spans
                or cell.style or not 0 <= len(cell.plain) <= inner
                or (cell.justify or "default") not in _JUSTIFY
                or not _NARROW.issuperset(cell.plain)):
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        component, post = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
            self.cursor_foreground_priority == "css", self.cursor_background_priority == "css")
        # What `Styled(pre_style=base + component, post_style=post)` gives a segment of no
        # style of its own.
        style = base_style + Style.from_meta({"row": row_index, "column": column_index}) + \
            component
        post_style = self.app.console.get_style(post)
        if post_style:
            style = style + post_style
        lines = [_line(cell.plain, cell.justify or "default", inner, self.cell_padding, style)]
        self._cell_render_cache[key] = lines
        return lines


def _line(text: str, justify: str, inner: int, pad: int, style: Style) -> list[Segment]:
    """One cell's segments, as Rich lays them out: a "default" cell is its text followed by
    the blank that fills the column; the others are one justified run ("right" and "center"
    drop trailing blanks first, as Rich does)."""
    if justify == "default":
        body = [Segment(text, style)]
        if len(text) < inner:
            body.append(Segment(" " * (inner - len(text)), style))
    elif justify == "left":
        body = [Segment(text.ljust(inner), style)]
    else:
        text = text.rstrip()
        left = inner - len(text) if justify == "right" else (inner - len(text)) // 2
        body = [Segment(" " * left + text + " " * (inner - len(text) - left), style)]
    if not pad:
        return body
    blank = Segment(" " * pad, style)
    return [blank, *body, blank]
