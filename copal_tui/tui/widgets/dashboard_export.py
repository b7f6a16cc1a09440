"""The dashboard's export prompt: a folder to write into and a format (md, csv or json).

Enter in the folder field exports; ctrl+g or Esc cancels (Esc is never the only way out).
Files already in the folder are never replaced unless "replace existing files" is ticked (the
command line's `--force`). Dismisses with (folder, format, replace), or None when cancelled.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, RadioButton, RadioSet, Static

FORMATS = ("md", "csv", "json")


class ExportDialog(ModalScreen[tuple[Path, str, bool] | None]):
    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog #export-box { width: 70; max-width: 100%; height: auto; background: $surface;
                               padding: 0 1; }
    ExportDialog RadioSet { layout: horizontal; width: auto; }
    """
    BINDINGS = [
        Binding("ctrl+g", "cancel", "Cancel", id="export.cancel"),
        Binding("escape", "cancel", "Cancel", show=False, id="export.cancel_escape"),
        Binding("ctrl+f", "next_format", "Format", id="export.format"),
    ]

    def __init__(self, folder: str = "", fmt: str = "md") -> None:
        super().__init__()
        self.folder = folder
        self.fmt = fmt if fmt in FORMATS else "md"

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Static("Export the report (as `copal export --format ...`)", classes="bold")
            with RadioSet(id="export-format"):
                for f in FORMATS:
                    yield RadioButton(f, value=f == self.fmt, id=f"export-{f}")
            yield Input(value=self.folder, placeholder="folder to write into (created if "
                        "missing)", id="export-folder")
            yield Checkbox("replace existing files", value=False, id="export-force")
            yield Static("enter export \u00b7 ctrl+f format \u00b7 ctrl+g cancel",
                         classes="muted")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        self.fmt = FORMATS[event.index]

    def action_next_format(self) -> None:
        self.fmt = FORMATS[(FORMATS.index(self.fmt) + 1) % len(FORMATS)]
        self.query_one(f"#export-{self.fmt}", RadioButton).value = True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        folder = event.value.strip()
        if not folder:
            self.notify("Type a folder to export into.", severity="warning")
            return
        force = self.query_one("#export-force", Checkbox).value
        self.dismiss((Path(folder).expanduser(), self.fmt, force))

    def action_cancel(self) -> None:
        self.dismiss(None)
