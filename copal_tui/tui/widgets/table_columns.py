"""The plain parts of a paged list, free of any widget: a column's description (`Column`), the
filter line's grammar (`parse_filter`) and the short renderings several lists share (`fmt_rate`,
`short_id`). `paged_table` re-exports them, so screens import one module."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text

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
