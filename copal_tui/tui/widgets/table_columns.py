"""The plain parts of a paged list, free of any widget: a column's description (`Column`), the
filter line's grammar (`parse_filter`), how the columns share a width (`shown_columns`,
`flex_width`) and what a cell shows (`cell`), and the short renderings several lists share
(`fmt_rate`, `short_id`). `paged_table` re-exports the names screens use, so they import one module."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text

from copal_tui.tui.safe import one_line, safe

_FILTER = re.compile(r'(?<!\S)([A-Za-z_]+):(?:"([^"]*)"|(\S+))')


def parse_filter(text: str) -> tuple[str, dict[str, str]]:
    """Split a filter line into free words and `key:value` filters (`key:"two words"` too)."""
    filters: dict[str, str] = {}
    for m in _FILTER.finditer(text):
        filters[m.group(1).lower()] = m.group(2) if m.group(2) is not None else m.group(3)
    return " ".join(_FILTER.sub(" ", text).split()), filters


@dataclass(frozen=True)
class Column:
    """One column. `width=None` makes it the flexible column that takes the remaining width;
    `hide_below` drops the column when the table is narrower (80 columns stay readable)."""

    key: str
    label: str
    width: int | None = None
    render: Callable[[dict[str, Any]], Text | str] | None = None
    hide_below: int = 0
    justify: Literal["left", "right"] = "left"
    min_width: int = 12


def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def short_id(value: str | None, world_id: str, width: int) -> str:
    """An id without its world prefix; when still too long, its tail (the distinctive part)."""
    text = value or ""
    if text.startswith(world_id + ":"):
        text = text[len(world_id) + 1:]
    return text if len(text) <= width else "\u2026" + text[-(width - 1):]


def shown_columns(columns: list[Column], width: int) -> list[Column]:
    """The columns a table `width` cells wide shows."""
    return [c for c in columns if width >= c.hide_below]


def flex_width(shown: list[Column], width: int) -> int:
    """The width of each flexible column among `shown` in a table `width` cells wide."""
    # Each column has one cell of padding each side; 2 more for the vertical scrollbar.
    # Several flexible columns share what is left equally.
    fixed = sum((c.width or 0) + 2 for c in shown) + 2
    flex = [c for c in shown if c.width is None]
    share = (width - fixed - 2 * len(flex)) // max(1, len(flex))
    return max(max((c.min_width for c in flex), default=0), share)


def cell(col: Column, row: dict[str, Any], width: int) -> Text:
    """Column `col`'s cell of `row`, cleaned and cut to one line of `width`."""
    if col.key not in row:
        return Text("\u2026", justify=col.justify)  # a decorated value still on its way
    if col.render is not None:
        value = col.render(row)
        text = value if isinstance(value, Text) else safe(one_line(value, width))
    else:
        raw = row.get(col.key)
        text = safe(one_line("" if raw is None else str(raw), width))
    text.justify = col.justify
    return text
