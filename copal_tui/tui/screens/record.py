"""A modal that shows one record in full (a policy, a clause, a composition, a run manifest):
titled sections of text that a table cell can only show cut to one line.

Section bodies are `rich` renderables built by the caller through `copal_tui.tui.safe`; this
screen never turns a string into markup.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from copal_tui.tui.safe import safe
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.screen_commands import ScreenCommands


class RecordScreen(ModalScreen[None]):
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape,q,b,enter", "close", "Close", id="record.close"),
    ]

    def __init__(self, title: str, sections: list[tuple[str, RenderableType]]) -> None:
        super().__init__()
        self.record_title = title
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="record", classes="panel"):
            yield Static(safe(self.record_title, style="bold"), classes="record-title")
            for heading, body in self.sections:
                yield Static(Text(heading, style="bold"), classes="section-title")
                yield Static(body, classes="section-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#record").focus()

    def action_close(self) -> None:
        self.dismiss(None)
