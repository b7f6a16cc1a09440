"""The guideline document of one dialogue as a modal: every guideline by category with the
oracle text, the one given marked, and the modified guidelines followed on violation turns.
Opened with `d` from the dialogue screen and the review queue; b, d, q or Esc close it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from copal_tui.services.dialogues import StoredDialogue
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.dialogue_view import document_renderable
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.scroll_pane import ScrollPane


class DialogueDocumentScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    DialogueDocumentScreen { align: center middle; }
    DialogueDocumentScreen #dialogue-document {
        width: 96%; height: 92%; background: $surface; padding: 0 1;
        border: round $primary;
    }
    """
    BINDINGS = [Binding("escape,b,d,q", "close", "Close", id="dialogue_document.close")]

    def __init__(self, dialogue: StoredDialogue,
                 highlight: tuple[Any, Any, Any] | None = None) -> None:
        super().__init__()
        self.dialogue = dialogue
        self.highlight = highlight

    def compose(self) -> ComposeResult:
        title = Text("Guideline document of ", style="bold")
        title.append_text(safe(one_line(self.dialogue.id, 60), style="bold"))
        with ScrollPane(id="dialogue-document"):
            yield Static(title)
            yield Static(document_renderable(self.dialogue.guidelines, self.dialogue.turns,
                                             self.highlight),
                         id="dialogue-document-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#dialogue-document").focus()

    def action_close(self) -> None:
        self.dismiss(None)
