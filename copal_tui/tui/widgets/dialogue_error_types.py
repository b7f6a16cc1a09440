"""The error type a reviewer is choosing for one judge mistake, with its optional note: the
taxonomy of copal_tui.domain.dialogue listed with keys 1-6 and what each type means, the choice
marked with a symbol and words (never colour alone). A fixed number of unwrapped lines, so a
choice repaints the widget alone (no layout of the screen)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from copal_tui.domain.dialogue import ERROR_TYPES
from copal_tui.tui.safe import one_line, safe

TYPES = list(ERROR_TYPES)  # key n chooses TYPES[n - 1]
LINES = len(TYPES) + 4  # title, the types, the chosen type's meaning, the note, the hint
ON, OFF = "\u25cf", "\u25cb"


def type_name(key: str) -> str:
    return ERROR_TYPES.get(key, key).split(":")[0]


class ErrorTypePicker(Static):
    DEFAULT_CSS = "ErrorTypePicker { text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error_type: str | None = None
        self.note: str | None = None
        self.relabel = False

    def reset(self, review: dict[str, Any] | None = None, *, relabel: bool = False) -> None:
        """Start over on a mistake, prefilled from `review` (the reviewer's current one, or
        the one they just undid)."""
        self.error_type = None if review is None else review.get("error_type")
        self.note = None if review is None else review.get("note")
        self.relabel = relabel
        self._redraw()

    def choose(self, number: int) -> bool:
        if not 1 <= number <= len(TYPES):
            return False
        self.error_type = TYPES[number - 1]
        self._redraw()
        return True

    def set_note(self, note: str | None) -> None:
        self.note = note
        self._redraw()

    def _redraw(self) -> None:
        if self.is_mounted:
            # Always LINES lines, none wrapping: no layout pass on a keypress.
            self.update(self.render_choice(), layout=False)

    def render_choice(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append("Error type" + (" (saved: enter relabels)" if self.relabel else ""),
                   style="bold underline")
        out.append("\n")
        for n, key in enumerate(TYPES, 1):
            chosen = key == self.error_type
            out.append(f" {ON if chosen else OFF} {n} {type_name(key)}",
                       style="bold reverse" if chosen else "")
            out.append("\n")
        meaning = "" if self.error_type is None else \
            ERROR_TYPES[self.error_type].partition(":")[2].strip()
        out.append(f"   {meaning}\n" if meaning else "\n", style="dim")
        out.append("Note: ", style="bold")
        out.append_text(safe(one_line(self.note, 200)) if self.note else Text(
            "(none; e adds one)", style="dim"))
        out.append("\n")
        out.append("\u2192 choose 1-6, enter submits" if self.error_type is None else
                   f"\u2192 chosen: {type_name(self.error_type)}; enter submits", style="dim")
        return out

    def on_mount(self) -> None:
        self._redraw()
