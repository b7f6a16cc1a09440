"""Choose the observed facet of an erroneous response: which of the twelve target facets the
failure shows. The facets of the item's pattern come first (the likeliest), then the others,
then "none". The item's own target facet is never marked: it would suggest the answer.

Up/down and enter pick; ctrl+g, q or Esc cancel. Dismisses with the facet, "" for none, or None
when cancelled.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from copal_tui.domain.taxonomy import PATTERN_FACETS, Facet, Pattern

NONE = ""


def pattern_facets(pattern: str | None) -> list[str]:
    known = {p.value for p in Pattern}
    return [f.value for f in PATTERN_FACETS[Pattern(pattern)]] if pattern in known else []


def facet_order(pattern: str | None) -> list[str]:
    """The pattern's facets first (in the taxonomy's order), then every other facet."""
    first = pattern_facets(pattern)
    return first + [f.value for f in Facet if f.value not in first]


class FacetScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    FacetScreen { align: center middle; }
    FacetScreen #facet-box { width: 60; height: auto; max-height: 22; background: $surface; }
    FacetScreen #facet-list { height: auto; max-height: 16; }
    """
    BINDINGS = [
        Binding("ctrl+g,q", "cancel", "Cancel", id="facet.cancel"),
        Binding("escape", "cancel", "Cancel", show=False, id="facet.cancel_escape"),
    ]

    def __init__(self, pattern: str | None, current: str | None = None) -> None:
        super().__init__()
        self.pattern = pattern
        self.current = current

    def compose(self) -> ComposeResult:
        order = facet_order(self.pattern)
        lead = len(pattern_facets(self.pattern))
        options: list[Option | None] = []
        for n, facet in enumerate(order):
            if n == lead and lead:
                options.append(None)  # a separator between the pattern's facets and the rest
            mark = "\u25cf " if facet == self.current else "  "
            options.append(Option(mark + facet, id=facet))
        options.append(None)
        options.append(Option(("\u25cf " if self.current is None else "  ") + "none",
                              id="-none"))
        with Vertical(classes="panel", id="facet-box"):
            yield Static("Observed facet of this error", classes="panel-title")
            yield OptionList(*options, id="facet-list")
            yield Static("\u2191\u2193 enter pick \u00b7 ctrl+g / q cancel", classes="muted")

    def on_mount(self) -> None:
        box = self.query_one(OptionList)
        box.focus()
        box.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        picked = event.option.id
        self.dismiss(NONE if picked == "-none" else picked)

    def action_cancel(self) -> None:
        self.dismiss(None)
