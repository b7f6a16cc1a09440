"""The numbered contract items of one response with the marks being made, and the derived
verdict (error and direction) recomputed by the contract logic on every toggle.

Required items come first, then forbidden ones; item n is toggled by key n (1-9) or by moving the
cursor (j/k) and pressing space, so contracts longer than nine items stay markable. Marks show as
symbols as well as colours (readable in 256 colours and by the colour-blind).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from copal_tui.domain.contract import Verdict, evaluate
from copal_tui.domain.taxonomy import Direction
from copal_tui.tui.safe import safe

DIRECTION_WORDS = {
    Direction.NONE.value: "none",
    Direction.UNDER.value: "under-enforcement",
    Direction.OVER.value: "over-enforcement",
    Direction.MIXED.value: "mixed",
}


@dataclass(frozen=True)
class ContractItem:
    number: int
    id: str
    required: bool
    text: str
    kind: str = "content"


def contract_items(required: Sequence[dict[str, Any]],
                   forbidden: Sequence[dict[str, Any]]) -> list[ContractItem]:
    """Number the contract: required items first, then forbidden ones."""
    rows = [(c, True) for c in required] + [(c, False) for c in forbidden]
    return [ContractItem(n, str(c["id"]), req, str(c.get("text") or ""),
                         str(c.get("kind") or "content"))
            for n, (c, req) in enumerate(rows, 1)]


def verdict_text(verdict: Verdict) -> Text:
    """One line: correct, or the error with its direction and the items that decide it."""
    if not verdict.error:
        return Text("\u2713 correct (e=0)", style="bold green")
    why = []
    if verdict.missing_required:
        why.append("missing " + ", ".join(verdict.missing_required))
    if verdict.present_forbidden:
        why.append("present " + ", ".join(verdict.present_forbidden))
    out = Text("\u2717 error (e=1) ", style="bold red")
    out.append(DIRECTION_WORDS[verdict.direction.value], style="bold")
    out.append(": " + "; ".join(why))
    return out


class ContractMarks(Static):
    """Contract items with present/absent marks and the verdict they imply."""

    class Changed(Message):
        def __init__(self, observed: list[str]) -> None:
            super().__init__()
            self.observed = observed

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[ContractItem] = []
        self._present: set[str] = set()
        self.cursor = 0
        self.title = "Contract"
        self.facet: str | None = None  # the observed facet chosen (label queue only)
        self.with_facet = False  # draw the facet line (the label queue, not adjudication)

    # -------------------------------------------------------------- state

    def set_contract(self, items: Iterable[ContractItem], observed: Iterable[str] = (),
                     title: str = "Contract", facet: str | None = None) -> None:
        self.items = list(items)
        self.facet = facet
        ids = {i.id for i in self.items}
        self._present = {o for o in observed if o in ids}
        self.cursor = 0
        self.title = title
        self._redraw()

    def clear(self, message: str = "") -> None:
        self.items = []
        self._present = set()
        self.update(Text(message, style="dim"))

    @property
    def observed(self) -> list[str]:
        """Present items in contract order (a stable, comparable mark set)."""
        return [i.id for i in self.items if i.id in self._present]

    @property
    def verdict(self) -> Verdict:
        return evaluate([i.id for i in self.items if i.required],
                        [i.id for i in self.items if not i.required], self.observed,
                        {i.id: i.kind for i in self.items})

    def toggle(self, number: int) -> bool:
        """Toggle item `number` (1-based); False when there is no such item."""
        if not 1 <= number <= len(self.items):
            return False
        item = self.items[number - 1]
        self._present ^= {item.id}
        self.cursor = number - 1
        self._redraw()
        self.post_message(self.Changed(self.observed))
        return True

    def set_facet(self, facet: str | None) -> None:
        self.facet = facet
        self._redraw()

    @property
    def kept_facet(self) -> str | None:
        """The facet a label keeps: only on a response the marks make erroneous."""
        return self.facet if self.verdict.error else None

    def toggle_cursor(self) -> bool:
        return self.toggle(self.cursor + 1)

    def move_cursor(self, delta: int) -> None:
        if self.items:
            self.cursor = (self.cursor + delta) % len(self.items)
            self._redraw()

    def set_observed(self, observed: Iterable[str]) -> None:
        ids = {i.id for i in self.items}
        self._present = {o for o in observed if o in ids}
        self._redraw()

    # -------------------------------------------------------------- drawing

    def _redraw(self) -> None:
        content = self.render_marks()
        width = self.content_size.width
        if not self.is_mounted or width <= 0:
            self.update(content)
            return
        # A key changes the marks in place (a box ticked, the cursor, the verdict line): the
        # screen is laid out again only when that changes the widget's height, not per key.
        self.update(content, layout=False)
        if self.get_content_height(self.size, self.app.size, width) != self.content_size.height:
            self.refresh(layout=True)

    def render_marks(self) -> RenderableType:
        head = Text(self.title, style="bold")
        head.append("  1-9 toggle \u00b7 c correct", style="dim")
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(no_wrap=True, justify="right")
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        for idx, item in enumerate(self.items):
            present = item.id in self._present
            box = Text("[x]" if present else "[ ]",
                       style="bold" if present else "dim")
            kind = "must" if item.required else "must not"
            label = Text(f"{item.id} {kind}: ", style="bold cyan" if item.required
                         else "bold magenta")
            label.append_text(safe(item.text))
            num = Text(str(item.number) if item.number <= 9 else "\u00b7")
            if idx == self.cursor and len(self.items) > 1:
                num.stylize("reverse")
            grid.add_row(num, box, label)
        if not self.items:
            grid.add_row("", "", Text("(no contract items)", style="dim"))
        parts: list[RenderableType] = [head, grid, verdict_text(self.verdict)]
        if self.with_facet and self.items:
            parts.append(self._facet_line())
        return Group(*parts)

    def _facet_line(self) -> Text:
        line = Text("observed facet: ", style="bold")
        if not self.verdict.error:
            line.append("none (correct)" if self.facet is None else
                        f"{self.facet} (not kept: no error)", style="dim")
            return line
        line.append(self.facet or "not named", style="bold" if self.facet else "dim")
        line.append("  o chooses", style="dim")
        return line
