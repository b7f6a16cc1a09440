"""The keys screen: every binding active on the screen below it, with its id (for keymaps)."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")]

    def compose(self) -> ComposeResult:
        table = Table(title="Keys (remap with COPAL_KEYMAP='{\"<id>\": \"<keys>\"}')",
                      expand=True)
        table.add_column("key")
        table.add_column("action")
        table.add_column("id", style="dim")
        stack = [s for s in self.app.screen_stack if s is not self]
        below = stack[-1] if stack else None
        seen = set()
        for node in ([below] if below is not None else []) + [self.app]:
            for binding in getattr(node, "BINDINGS", []):
                if not isinstance(binding, Binding) or binding.id in seen:
                    continue
                seen.add(binding.id)
                key = self.app.get_key_display(binding)
                table.add_row(key, binding.description or binding.action, binding.id or "")
        with VerticalScroll(classes="panel"):
            yield Static(table)
            yield Static("Every action is also in the command palette (ctrl+p). "
                         "No action needs Esc alone or a mouse.", classes="muted")

    def action_dismiss(self, result: object = None) -> None:  # type: ignore[override]
        self.app.pop_screen()
