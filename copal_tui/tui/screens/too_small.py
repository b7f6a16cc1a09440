"""Shown over the app while the terminal is smaller than the minimum (80x24 by default).

The app pushes and pops it on resize; nothing underneath is lost meanwhile. It is modal, so the
app's own keys do not reach the screen below; quitting stays possible (q or ctrl+q).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static


class TooSmallScreen(ModalScreen[None]):
    BINDINGS = [Binding("q,ctrl+q", "app.quit", "Quit", id="too_small.quit")]

    def compose(self) -> ComposeResult:
        yield Static(self._message(), id="too-small")

    def _message(self) -> Text:
        s = self.app.settings  # type: ignore[attr-defined]
        w, h = self.app.size.width, self.app.size.height
        short = []
        if w < s.min_width:
            short.append(f"{s.min_width - w} more column{'s' if s.min_width - w > 1 else ''}")
        if h < s.min_height:
            short.append(f"{s.min_height - h} more line{'s' if s.min_height - h > 1 else ''}")
        out = Text(justify="center")
        out.append("The terminal is too small for copal.\n", style="bold")
        out.append(f"It needs at least {s.min_width}x{s.min_height}; it is {w}x{h}")
        out.append(f" ({' and '.join(short)}).\n" if short else ".\n")
        out.append("Enlarge the window: nothing is lost meanwhile.  q quits.", style="dim")
        return out

    def on_resize(self) -> None:
        self.query_one("#too-small", Static).update(self._message())
