"""What the two COPAL marking screens (the label queue and adjudication) share on top of the
labelling base (copal_tui.tui.screens.label_base): the contract keys and the panes.

The keys (1-9 toggle an item, j/k move the cursor and space toggles the item under it, c says
"this response is fine": every required item present, nothing forbidden) keep their `label.*`
ids on both screens, so remapping a marking key remaps it for adjudication too ("the
adjudicator decides with the same keys"). The reading pane (query, response, clauses) is on the
left; the contract with its marks, and the other labels and judges when shown, on the right
(adjudication puts the disagreement above the decision).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding

from copal_tui.services.annotation.views import Annotation, CopalReveal
from copal_tui.tui.widgets.contract_marks import ContractMarks
from copal_tui.tui.widgets.label_context import LabelContext
from copal_tui.tui.widgets.marks_matrix import MarkColumn, MarksMatrix, columns_for
from copal_tui.tui.widgets.scroll_pane import ScrollPane

if TYPE_CHECKING:
    from copal_tui.tui.screens.label_base import LabelScreen

    _Base = LabelScreen
else:
    _Base = object  # a mixin: the screen classes bring LabelScreen

# Not in the footer (the contract pane names them); `?` and the palette list them.
MARK_BINDINGS: list[Binding] = [
    Binding("1", "mark(1)", "toggle item 1", show=False, id="label.mark1"),
    *[Binding(str(n), f"mark({n})", f"toggle item {n}", show=False, id=f"label.mark{n}")
      for n in range(2, 10)],
    Binding("c", "correct", "correct", show=False, id="label.correct"),
    Binding("j", "cursor(1)", "cursor down the contract", show=False, id="label.cursor_down"),
    Binding("k", "cursor(-1)", "cursor up the contract", show=False, id="label.cursor_up"),
    Binding("space", "toggle_cursor", "toggle the item at the cursor", show=False,
            id="label.toggle_cursor"),
]


def reveal_columns(seen: CopalReveal, decision: Annotation | None = None) -> list[MarkColumn]:
    """The matrix's columns for a reveal: each annotator, each judge, then the adjudicator's
    decision when there is one (the log's typed rows, as the matrix takes them)."""
    return columns_for(seen.labels, seen.judgments, decision)


def remark_rows(remarks: list[Annotation]) -> list[Annotation]:
    """The notes and flags as the matrix lists them: the log's events as they are (kept so
    the screens that call it need no change; they may pass the events straight through)."""
    return remarks


class Marking(_Base):
    """Panes and contract keys; the screen implements `has_current`, `action_correct`."""

    MATRIX_FIRST = False
    READING_PANE = "#label-read"

    def compose_panes(self) -> ComposeResult:
        yield LabelContext(id="label-read", classes="label-read")
        with ScrollPane(id="label-side", classes="label-side"):
            if self.MATRIX_FIRST:
                # Adjudication: the disagreement first, the decision under it.
                yield MarksMatrix(part="table", id="marks-matrix")
                yield ContractMarks(id="contract-marks")
                yield MarksMatrix(part="remarks", id="marks-remarks")
            else:
                yield ContractMarks(id="contract-marks")
                yield MarksMatrix(id="marks-matrix")

    @property
    def marks(self) -> ContractMarks:
        return self.query_one(ContractMarks)

    @property
    def matrix(self) -> MarksMatrix:
        return self.query_one("#marks-matrix", MarksMatrix)

    @property
    def context_pane(self) -> LabelContext:
        return self.query_one(LabelContext)

    def action_mark(self, number: int) -> None:
        if not self.has_current() or not self.marks.toggle(number):
            self.app.bell()

    def action_cursor(self, delta: int) -> None:
        self.marks.move_cursor(delta)

    def action_toggle_cursor(self) -> None:
        if not self.has_current() or not self.marks.toggle_cursor():
            self.app.bell()
