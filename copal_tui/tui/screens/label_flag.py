"""Flag the response's item with a reason: contract defect, unnatural query or ambiguous.

Keys 1-3 pick a reason at once; up/down and enter work too; ctrl+g, q or Esc cancel.
Dismisses with the reason, or None when cancelled.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from copal_tui.domain.annotation.subjects import FLAG_REASONS


class FlagScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    FlagScreen { align: center middle; }
    FlagScreen #flag-box { width: 64; height: auto; background: $surface; }
    """
    BINDINGS = [
        Binding("1", "pick(0)", "Contract defect", id="flag.contract_defect"),
        Binding("2", "pick(1)", "Unnatural query", id="flag.unnatural_query"),
        Binding("3", "pick(2)", "Ambiguous", id="flag.ambiguous"),
        Binding("ctrl+g,q", "cancel", "Cancel", id="flag.cancel"),
        Binding("escape", "cancel", "Cancel", show=False, id="flag.cancel_escape"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel", id="flag-box"):
            yield Static("Flag this item: why?", classes="panel-title")
            yield OptionList(*[Option(f"{n}  {reason}", id=reason)
                               for n, reason in enumerate(FLAG_REASONS, 1)], id="flag-reasons")
            yield Static("1-3 or enter pick \u00b7 ctrl+g / q cancel", classes="muted")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_pick(self, index: int) -> None:
        self.dismiss(FLAG_REASONS[index])

    def action_cancel(self) -> None:
        self.dismiss(None)
