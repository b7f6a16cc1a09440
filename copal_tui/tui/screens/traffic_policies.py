"""Pick which of the linked world's policies a traffic pair engages (optional): every policy of
the world in inventory order, the ones already chosen ticked.

Up/down move, space ticks or unticks the highlighted policy, enter keeps the choice; ctrl+g, q or
Esc cancel (Esc is never the only way out). A ticked policy is marked with a symbol, not colour
alone. Dismisses with the chosen policy ids in inventory order, or None when cancelled. Policy
texts are shown through copal_tui.tui.safe, one line each.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from copal_tui.services.annotation.views import PolicyRow
from copal_tui.tui.safe import one_line


class TrafficPoliciesScreen(ModalScreen[list[str] | None]):
    DEFAULT_CSS = """
    TrafficPoliciesScreen { align: center middle; }
    TrafficPoliciesScreen #policies-box { width: 76; height: auto; max-height: 22;
                                          background: $surface; }
    TrafficPoliciesScreen #policies-list { height: auto; max-height: 16; }
    """
    BINDINGS = [
        Binding("space", "tick", "Tick", id="traffic_policies.tick"),
        # Priority: enter keeps the choice rather than selecting the highlighted policy.
        Binding("enter", "keep", "Keep", priority=True, id="traffic_policies.keep"),
        Binding("ctrl+g,q", "cancel", "Cancel", id="traffic_policies.cancel"),
        Binding("escape", "cancel", "Cancel", show=False, id="traffic_policies.cancel_escape"),
    ]

    def __init__(self, policies: Sequence[PolicyRow], chosen: Sequence[str]) -> None:
        super().__init__()
        self.policies = list(policies)
        self.chosen = set(chosen)

    def _prompt(self, policy: PolicyRow) -> Text:
        mark = "\u25cf " if policy.id in self.chosen else "\u25cb "
        return Text(mark + one_line(f"{policy.id}  {policy.text}", 62), no_wrap=True,
                    overflow="ellipsis")

    def compose(self) -> ComposeResult:
        options = [Option(self._prompt(p), id=p.id) for p in self.policies]
        with Vertical(classes="panel", id="policies-box"):
            yield Static("Policies this pair engages (optional)", classes="panel-title")
            yield OptionList(*options, id="policies-list")
            yield Static("\u2191\u2193 move \u00b7 space ticks \u00b7 enter keeps \u00b7 "
                         "ctrl+g / q cancel", classes="muted")

    def on_mount(self) -> None:
        box = self.query_one(OptionList)
        box.focus()
        box.highlighted = 0

    def action_tick(self) -> None:
        box = self.query_one(OptionList)
        index = box.highlighted
        if index is None or not self.policies:
            return
        policy = self.policies[index]
        self.chosen ^= {policy.id}
        box.replace_option_prompt_at_index(index, self._prompt(policy))

    def action_keep(self) -> None:
        self.dismiss([p.id for p in self.policies if p.id in self.chosen])

    def action_cancel(self) -> None:
        self.dismiss(None)
