"""Tables that fit the terminal: nothing a person reads is cut, no number is broken.

Every CLI table (`copal report` on the terminal, `copal runs`, `copal stats`) is printed here,
in the first of three layouts that fits the console's width (COLUMNS, else the terminal):

1. A bordered table. Each column gets at least its minimum width: a numeric column (a count,
   a rate, an interval `[0.600, 0.785]`) its widest cell, a text column its longest word, a
   header its longest word. Only text wraps, and only between words; nothing is elided.
2. The same table with the long headers of numeric columns replaced by letters (A, B, ...)
   and a legend under it (`A = offline/comply-all`): pivots whose columns are model names.
3. One record per block: the row's key cells as a heading, then `header: value` pairs packed
   into lines (a pair is never split unless it is wider than the terminal on its own).

`wide` prints layout 1 at its natural width whatever the terminal (for `less -S`, a wide
window or a file). Every cell, header, title and note is a rich `Text` of text made safe by
`copal_tui.domain.safe_text.visible`: data is never markup and never runs an escape sequence.
"""

from __future__ import annotations

import errno
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from copal_tui.domain.safe_text import visible

GAP = "   "  # between two `header: value` pairs of a block, and two legend entries
INDENT = 2  # a block's pairs under its heading


class _Console(Console):
    """rich's console, except that a reader gone away (`copal report | head`) raises
    BrokenPipeError to the command's entry point, which ends every command alike
    (copal_tui.commands.output), where rich would exit with status 1 itself."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "the reader of standard output has gone")


def terminal_console() -> Console:
    """A console as wide as COLUMNS when set, else the terminal, else 80 (rich's rule)."""
    return _Console()


def _width(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


@dataclass
class Grid:
    """A table's cells as safe strings, with what the layouts need to know about them."""

    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned, never wrapped
    keys: int = 1  # leading columns that name a row: a block's heading when stacked
    whole: set[int] = field(default_factory=set)  # never wrapped (numbers, timestamps)

    @classmethod
    def of(cls, headers: Sequence[Any], rows: Sequence[Sequence[Any]], numeric: set[int],
           keys: int, whole: set[int]) -> Grid:
        safe_rows = [[visible("" if c is None else c) for c in row] for row in rows]
        return cls([visible(h) for h in headers], safe_rows, numeric, keys, whole | numeric)

    def column(self, i: int) -> list[str]:
        return [row[i] if i < len(row) else "" for row in self.rows]

    def min_width(self, i: int, header: str) -> int:
        cells = self.column(i)
        if i in self.whole:
            data = max((_width(c) for c in cells), default=0)
        else:
            data = max((_longest_word(c) for c in cells), default=0)
        return max(data, _longest_word(header), 1)

    def max_width(self, i: int, header: str) -> int:
        return max([_width(header), *(_width(c) for c in self.column(i))])


def _height(lengths: list[list[int]], widths: list[int]) -> int:
    """Roughly how many lines the rows take at `widths` (each row as tall as its tallest
    cell; `lengths[i]` are column i's cell widths, the header first)."""
    return sum(max(-(-cell // w) if cell else 1 for cell, w in zip(row, widths, strict=True))
               for row in zip(*lengths, strict=True))


SAMPLE = 60  # rows the width allocation looks at: enough to judge, bounded in cost


def _sample(cells: list[str]) -> list[str]:
    """Up to SAMPLE cells, evenly spread (the same rows for every column)."""
    step = max(1, -(-len(cells) // SAMPLE))
    return cells[::step]


def _allocate(lengths: list[list[int]], mins: list[int], maxs: list[int],
              room: int) -> list[int] | None:
    """Column widths within `room` cells, every minimum met; None when the minimums do not
    fit. The spare goes where it saves most lines per cell, then to whatever can use it."""
    if sum(mins) > room:
        return None
    widths = list(mins)
    spare = room - sum(widths)
    while spare > 0:
        now, best = _height(lengths, widths), (0.0, -1, 0)
        for i, w in enumerate(widths):
            # The widths at which one of the column's cells takes a line less.
            steps = {-(-cell // (k - 1)) for cell in lengths[i]
                     if (k := -(-cell // w)) > 1}
            for step in sorted(s for s in steps if w < s <= min(maxs[i], w + spare)):
                gain = now - _height(lengths, [*widths[:i], step, *widths[i + 1:]])
                if gain / (step - w) > best[0]:
                    best = (gain / (step - w), i, step)
        if best[1] < 0:
            break
        spare -= best[2] - widths[best[1]]
        widths[best[1]] = best[2]
    for i in sorted(range(len(widths)), key=lambda i: maxs[i] - widths[i]):
        give = min(max(maxs[i] - widths[i], 0), spare)
        widths[i] += give
        spare -= give
    return widths


def _overhead(columns: int) -> int:
    # rich's default box: a rule before every column and after the last, one space of
    # padding either side of each cell.
    return 3 * columns + 1


def _abbreviated(grid: Grid, room: int,
                 every: bool) -> tuple[list[str], list[tuple[str, str]]]:
    """Headers with long ones of numeric columns replaced by letters, and the legend.

    The headers that save most go first, until the minimum widths fit `room`; with `every`,
    all that are longer than their data are lettered (a pivot's model columns read better
    all alike)."""
    # What lettering a numeric column saves: its header's excess over its data.
    saving = {i: grid.min_width(i, h) - grid.min_width(i, "") for i, h in enumerate(grid.headers)
              if i in grid.numeric and grid.min_width(i, h) > grid.min_width(i, "")}
    excess = sum(grid.min_width(i, h) for i, h in enumerate(grid.headers)) - room
    chosen: list[int] = []
    for i in sorted(saving, key=lambda i: -saving[i]):
        if excess <= 0:
            break
        chosen.append(i)
        excess -= saving[i]
    if every:
        chosen = list(saving)
    headers, legend = list(grid.headers), []
    for i, letter in zip(sorted(chosen), string.ascii_uppercase, strict=False):
        headers[i] = letter
        legend.append((letter, " ".join(grid.headers[i].split())))
    return headers, legend


def _table(grid: Grid, headers: list[str], widths: list[int] | None) -> Table:
    table = Table()
    for i, h in enumerate(headers):
        table.add_column(Text(h), justify="right" if i in grid.numeric else "left",
                         # A numeric (whole) column is as wide as its widest cell: only
                         # its header may wrap (between words, as the text columns do).
                         width=None if widths is None else widths[i],
                         no_wrap=widths is None, overflow="fold")
    for row in grid.rows:
        table.add_row(*(Text(c) for c in row))
    return table


def packed(items: list[Text], room: int) -> list[Text]:
    """`items` in as few lines as fit `room`, GAP apart; an item is never split."""
    lines: list[Text] = []
    for item in items:
        if lines and lines[-1].cell_len + len(GAP) + item.cell_len <= room:
            lines[-1].append(GAP)
            lines[-1].append_text(item)
        else:
            lines.append(item.copy())
    return lines


def _pair(label: str, value: str) -> Text:
    out = Text(" ".join(label.split()) + ": ", style="dim")
    out.append(value)
    return out


def _print_stacked(console: Console, grid: Grid) -> None:
    room = max(console.width - INDENT, 20)
    for row in grid.rows:
        keys = [c for c in row[:grid.keys] if c]
        console.print(Text(" \u00b7 ".join(keys) or "(row)", style="bold"))
        pairs = [_pair(grid.headers[i], c) for i, c in enumerate(row)
                 if i >= grid.keys and c != ""]
        for line in packed(pairs, room):
            console.print(Padding(line, (0, 0, 0, INDENT), expand=False))


def print_table(console: Console, headers: Sequence[Any], rows: Sequence[Sequence[Any]], *,
                title: str | None = None, numeric: set[int] | None = None, keys: int = 1,
                whole: set[int] | None = None, note: str = "", wide: bool = False,
                stacked_hint: str = "", letter_all: bool = False) -> str:
    """Print a table in the first layout that fits `console` (see the module docstring);
    return the layout used: "table", "abbreviated" or "stacked". `stacked_hint` is printed
    under the stacked layout (how to see the rows as a table). Columns in `numeric` are
    right-aligned; those and the ones in `whole` are never wrapped. `letter_all`: when
    headers must be lettered, letter every long one (pivots), not only as few as fit."""
    grid = Grid.of(headers, rows, numeric or set(), keys, whole or set())
    if not grid.rows:
        grid.rows = [["(none)"] + [""] * (len(grid.headers) - 1)]
    if title:
        console.print(Text(visible(title), style="bold"))
    layout = "stacked"
    if wide:
        natural = sum(grid.max_width(i, h) for i, h in enumerate(grid.headers))
        before = console.width
        console.width = max(before, natural + _overhead(len(grid.headers)))
        try:
            console.print(_table(grid, grid.headers, None))
        finally:
            console.width = before
        layout = "table"
    else:
        room = console.width - _overhead(len(grid.headers))
        for name, (heads, legend) in (("table", (grid.headers, [])),
                                      ("abbreviated", _abbreviated(grid, room, letter_all))):
            lengths = [[_width(h), *map(_width, _sample(grid.column(i)))]
                       for i, h in enumerate(heads)]
            widths = _allocate(lengths, [grid.min_width(i, h) for i, h in enumerate(heads)],
                               [grid.max_width(i, h) for i, h in enumerate(heads)], room)
            if widths is not None:
                console.print(_table(grid, heads, widths))
                for line in packed([Text(f"{k} = {v}") for k, v in legend], console.width):
                    console.print(line)
                layout = name
                break
        else:
            _print_stacked(console, grid)
            if stacked_hint:
                console.print(Text(visible(stacked_hint), style="italic"))
    if note:
        console.print(Text(visible(note), style="italic"))
    return layout
