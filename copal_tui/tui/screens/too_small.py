"""Shown instead of the app while the terminal is smaller than the minimum (80x24)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static


class TooSmallScreen(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        s = self.app.settings  # type: ignore[attr-defined]
        yield Static(
            f"The terminal is too small for copal.\nIt needs at least {s.min_width}x"
            f"{s.min_height}; it is {self.app.size.width}x{self.app.size.height}.\n"
            "Enlarge the window; nothing is lost meanwhile.",
            id="too-small",
        )

    def on_resize(self) -> None:
        s = self.app.settings  # type: ignore[attr-defined]
        self.query_one(Static).update(
            f"The terminal is too small for copal.\nIt needs at least {s.min_width}x"
            f"{s.min_height}; it is {self.app.size.width}x{self.app.size.height}.\n"
            "Enlarge the window; nothing is lost meanwhile.")
