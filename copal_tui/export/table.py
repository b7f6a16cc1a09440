"""The tabular model behind CSV, Markdown, LaTeX and the terminal (`Table`), the spelling of
typed columns, and the cell helpers every table module shares.

Columns are typed (str, int, float, bool) so a CSV reader can restore the types; `display` is
the subset of the narrow renderings (Markdown, LaTeX, terminal), CSV carries every column. The
modules that build or render tables import this one and none of each other's model, so they
form no import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from copal_tui.metrics.document import Metric
from copal_tui.metrics.document_copal import JudgeValidity, ValidityBlock


@dataclass
class Table:
    name: str
    title: str
    columns: list[tuple[str, str]]
    rows: list[list[Any]] = field(default_factory=list)
    display: list[str] | None = None
    note: str = ""

    def view(self, narrow: bool) -> tuple[list[tuple[str, str]], list[list[Any]]]:
        """Columns and rows, all of them or only the display subset."""
        if not narrow or self.display is None:
            return self.columns, self.rows
        keep = [i for i, (name, _t) in enumerate(self.columns) if name in self.display]
        return [self.columns[i] for i in keep], [[row[i] for i in keep] for row in self.rows]


def cols(spec: str) -> list[tuple[str, str]]:
    """'model:str n:int rate:float' -> [('model', 'str'), ...]."""
    return [(part.split(":")[0], part.split(":")[1]) for part in spec.split()]


def field_rows(table: Table, rows: Iterable[BaseModel]) -> list[list[Any]]:
    """The rows of a table whose columns are the fields of those names of section rows."""
    return [[getattr(r, name) for name, _kind in table.columns] for r in rows]


def bounds(m: Metric) -> tuple[float | None, float | None]:
    """A metric's interval as (low, high); None where undefined (an empty cell, n/a)."""
    return (None, None) if m.interval is None else m.interval.bounds


def estimate(m: Metric) -> list[Any]:
    """Value, low, high: the cells of a figure with its interval."""
    return [m.value, *bounds(m)]


def validity_blocks(entry: JudgeValidity) -> list[tuple[str, JudgeValidity | ValidityBlock]]:
    """A judge setting's validity pooled ("all"), then per pattern."""
    return [("all", entry), *entry.by_pattern.items()]
