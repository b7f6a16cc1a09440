"""A one-line prompt for a note on the response being labelled or adjudicated.

Enter saves; enter on an empty line, ctrl+g or Esc cancels (Esc is never the only way out).
Dismisses with the note text, or None when cancelled.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class NoteScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen #note-box { width: 64; height: auto; background: $surface; }
    """
    BINDINGS = [
        Binding("ctrl+g", "cancel", "Cancel", id="note.cancel"),
        Binding("escape", "cancel", "Cancel", show=False, id="note.cancel_escape"),
    ]

    def __init__(self, title: str = "Note on this response") -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="panel", id="note-box"):
            yield Static(self.title_text, classes="panel-title")
            yield Input(placeholder="type the note, enter saves (empty enter cancels)",
                        id="note-input", max_length=2000)
            yield Static("enter save \u00b7 ctrl+g cancel", classes="muted")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
