"""Marks side by side: one column per annotator, judge, adjudication and the decision being
made; one row per contract item, then the error and direction each column implies.

Used by the adjudication screen and, once an annotator has submitted (or blind mode is off),
by the label queue. Present is shown as a check mark, absent as a dot and "not marked" (a
full-policy judge gives only an error) as a question mark, never by colour alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from copal_tui.services.annotation.views import Annotation, CopalJudgment
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.contract_marks import ContractItem

# One letter per direction keeps a column narrow enough for five sources in 33 cells.
SHORT_DIRECTION = {"none": "-", "under_enforcement": "U", "over_enforcement": "O",
                   "mixed": "M"}


@dataclass(frozen=True)
class MarkColumn:
    header: str
    legend: str
    observed: Sequence[str] | None  # None: this source did not mark items
    error: int | None
    direction: str | None
    remark: str | None = None  # a note or rationale, shown under the matrix


def columns_for(labels: Sequence[Annotation], judgments: Sequence[CopalJudgment],
                adjudication: Annotation | None = None) -> list[MarkColumn]:
    """Each annotator's current label, each judge, then the adjudicator's decision (an event
    of the log whose annotator is the adjudicator)."""
    cols = [MarkColumn(one_line(lab.annotator, 8), f"annotator {lab.annotator}",
                       lab.get("observed") or [], lab.get("error"), lab.get("direction"),
                       lab.get("note"))
            for lab in labels]
    for n, j in enumerate(judgments, 1):
        cols.append(MarkColumn(
            f"J{n}", f"judge {j.judge} ({j.mode})", j.observed, j.error, j.direction,
            j.rationale or (f"failed: {j.failure}" if j.failure else None)))
    if adjudication is not None:
        cols.append(MarkColumn("ADJ", f"adjudicated by {adjudication.annotator}",
                               adjudication.get("observed") or [], adjudication.get("error"),
                               adjudication.get("direction"), adjudication.get("note")))
    return cols


def matrix(items: Sequence[ContractItem], cols: Sequence[MarkColumn],
           title: str = "Marks side by side", part: str = "all",
           notes: Sequence[Annotation] = ()) -> RenderableType:
    """`part`: "table" (marks, error, direction), "remarks" (who each column is, their label
    notes and rationales, then the notes and flags left on the response) or "all" (both)."""
    if not cols:
        return Text("No labels or judgments on this response yet.", style="dim") \
            if part != "remarks" else Text("")
    parts: list[RenderableType] = []
    if part in ("table", "all"):
        parts += [Text(title, style="bold"), _table(items, cols),
                  Text("dir: O over, U under, M mixed", style="dim")]
        if len({c.error for c in cols if c.error is not None}) > 1:
            parts.append(Text("\u26a0 the columns disagree on the error", style="bold yellow"))
    if part in ("remarks", "all"):
        parts += _remarks(cols) + _notes(notes)
    return Group(*parts)


def _notes(notes: Sequence[Annotation]) -> list[RenderableType]:
    """The notes and flags left on the response (events of the log, payload `note`/`flag`)."""
    out: list[RenderableType] = []
    for n in notes:
        flagged = n.action == "flag"
        line = Text("\u2691 " if flagged else "\u270e ", style="bold yellow" if flagged else "")
        line.append(f"{one_line(n.annotator, 16)}: ", style="bold")
        if flagged:
            line.append(f"flagged {one_line(n.get('flag'), 40)}", style="yellow")
        if n.get("note"):
            line.append(" " if flagged else "")
            line.append_text(safe(n.get("note"), style="italic"))
        out.append(line)
    return out


def _table(items: Sequence[ContractItem], cols: Sequence[MarkColumn]) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("#", justify="right", no_wrap=True)
    for col in cols:
        table.add_column(col.header, justify="center", no_wrap=True)
    for item in items:
        cells = [Text(f"{item.number} {item.id}", style="cyan" if item.required
                      else "magenta")]
        for col in cols:
            if col.observed is None:
                cells.append(Text("?", style="dim"))
            elif item.id in col.observed:
                cells.append(Text("\u2713", style="bold"))
            else:
                cells.append(Text("\u00b7", style="dim"))
        table.add_row(*cells)
    table.add_row(Text("e", style="bold"), *[
        Text("-" if c.error is None else str(c.error), style="bold red" if c.error else "green")
        for c in cols])
    table.add_row(Text("dir", style="bold"), *[
        Text(SHORT_DIRECTION.get(c.direction or "", c.direction or "-")) for c in cols])
    return table


def _remarks(cols: Sequence[MarkColumn]) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for col in cols:
        named = col.legend != f"annotator {col.header}"  # a truncated name or a judge
        if not named and not col.remark:
            continue
        line = Text(f"{col.header}: ", style="bold")
        line.append(one_line(col.legend, 60), style="dim")
        parts.append(line)
        if col.remark:
            parts.append(Text("  ").append_text(safe(col.remark, style="italic")))
    return parts


class MarksMatrix(Static):
    """A Static that draws `matrix(...)` (or one `part` of it); empty until `show` is called.
    `columns` is what is shown (tests and blind-mode checks read it)."""

    columns: tuple[MarkColumn, ...] = ()

    def __init__(self, *, part: str = "all", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.part = part

    def show(self, items: Sequence[ContractItem], cols: Sequence[MarkColumn],
             title: str = "Marks side by side", notes: Sequence[Annotation] = ()) -> None:
        self.columns = tuple(cols)
        self.update(matrix(items, cols, title, self.part, notes))

    def hide(self, message: str = "") -> None:
        self.columns = ()
        self.update(Text(message, style="dim"))
