"""Form controls whose state reads without colour, for the jobs form.

- `TickBox`: a checkbox drawn `[x] label` / `[ ] label` (Textual's draws the same glyph for
  both states and tells them apart by colour only).
- `TickList`: a selection list whose rows start with `[x]` / `[ ]` for the same reason.
- `FormInput`: an input that, entered with Tab, puts the cursor at the end of its text and
  selects nothing (Textual's selects all, so the next key replaces what was there); its
  placeholder is a hint (`e.g. ...`), styled apart from a value by the form's CSS.
- `ListSuggester`: completes the last comma-separated name from a list.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.events import Focus
from textual.strip import Strip
from textual.suggester import Suggester
from textual.widgets import Checkbox, Input, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

TICKED, UNTICKED = "[x]", "[ ]"


class TickBox(Checkbox):
    """A checkbox whose state is in its glyph: `[x]` ticked, `[ ]` not."""

    @property
    def _button(self) -> Content:
        return Content.styled(TICKED if self.value else UNTICKED,
                              self.get_visual_style("toggle--label"))


class TickList(SelectionList[str]):
    """A selection list whose rows show `[x]` / `[ ]` in place of the coloured block."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        _, scroll_y = self.scroll_offset
        try:
            selection = self.get_option_at_index(scroll_y + y)
        except OptionDoesNotExist:
            return line
        segments = list(line)
        if len(segments) < 3:
            return line
        glyph = TICKED if selection.value in self._selected else UNTICKED
        # The first three segments are the button's left side, inside and right side; keep
        # their styles (and the click metadata) and draw the state as text.
        head = [Segment(ch, seg.style) for ch, seg in zip(glyph, segments[:3], strict=True)]
        return Strip([*head, *segments[3:]], line.cell_length)


class FormInput(Input):
    """An input that keeps its text when focused: the cursor goes to the end, nothing is
    selected, so typing adds to the value instead of replacing it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def on_focus(self, event: Focus) -> None:
        if not event.from_app_focus:  # not when the app regains focus mid-edit
            self.cursor_position = len(self.value)


class ListSuggester(Suggester):
    """Completes the last comma-separated name from a list."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.names = names

    async def get_suggestion(self, value: str) -> str | None:
        head, sep, last = value.rpartition(",")
        stem = last.lstrip()
        if not stem:
            return None
        for name in self.names:
            if name.startswith(stem) and name != stem:
                return f"{head}{sep}{last[: len(last) - len(stem)]}{name}"
        return None
