"""A long text shown a part at a time: a response in the COPAL and COMPASS label queues and
adjudication (read from the store a part at a time, never whole), on the item and COMPASS query
screens and the turn under review in the judge-mistake review (cut in memory).

A part is at most `SHOWN` (copal_tui.tui.safe): bytes of UTF-8 when read from the store,
characters when cut in memory; a text of one part is shown as it is. A longer one says above it
which part is on screen, of how many, and under it that the text goes on; `>` and `<` (bound by
each screen that shows one, `part_bindings`) show the next and previous part. Every part goes
through `safe` like any other stored text.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding

from copal_tui.services.annotation.views import TextPart, part_of
from copal_tui.tui.safe import SHOWN, safe

NOTE_STYLE = "dim italic"


def part_bindings(prefix: str) -> list[Binding]:
    """`>` and `<` for a screen's long text, as priority bindings (they page the text whatever
    has focus), with the screen's id prefix."""
    return [
        Binding("greater_than_sign", "read_part(1)", "next part of a long text", show=False,
                priority=True, id=f"{prefix}.next_part"),
        Binding("less_than_sign", "read_part(-1)", "previous part of a long text", show=False,
                priority=True, id=f"{prefix}.prev_part"),
    ]


class LongText:
    """One text and the part of it on screen. `read(index)` reads another part (None when the
    text is gone); without it the text is one part."""

    def __init__(self, part: TextPart | None,
                 read: Callable[[int], TextPart | None] | None = None) -> None:
        self.part = part
        self._read = read

    @classmethod
    def of(cls, text: str | None) -> LongText:
        """A text already in memory, cut in parts of `SHOWN` characters."""
        if text is None:
            return cls(None)
        return cls(part_of(text, 0, SHOWN), lambda index: part_of(text, index, SHOWN))

    @property
    def parted(self) -> bool:
        return self.part is not None and not self.part.whole

    def move(self, delta: int) -> bool:
        """Show the part `delta` parts on; False (and nothing changes) when there is none."""
        part = self.part
        if part is None or self._read is None or not 0 <= part.index + delta < part.count:
            return False
        found = self._read(part.index + delta)
        if found is None:
            return False
        self.part = found
        return True

    def notes(self) -> tuple[Text | None, Text | None]:
        """The lines above and under a part of a text of several parts (None: none)."""
        part = self.part
        if part is None or part.whole:
            return None, None
        above = Text(f"[part {part.index + 1:,} of {part.count:,}: > shows the next part, "
                     "< the previous]", style=NOTE_STYLE)
        below = None if part.index + 1 == part.count else Text(
            f"[\u2026 continued in part {part.index + 2:,} of {part.count:,}: press >]",
            style=NOTE_STYLE)
        return above, below

    def renderables(self, empty: str = "(empty)", style: str = "",
                    empty_style: str = "dim") -> list[RenderableType]:
        """The part on screen (`empty` when there is no text), between its `notes`."""
        return [*self._texts(empty, style, empty_style)]

    def text(self, style: str = "", empty: str = "(empty)") -> Text:
        """`renderables` as one Text, a line apart."""
        return Text("\n").join(self._texts(empty, style, "dim"))

    def _texts(self, empty: str, style: str, empty_style: str) -> list[Text]:
        part = self.part
        if part is None or (part.whole and not part.text):
            return [Text(empty, style=empty_style)]
        above, below = self.notes()
        return [note for note in (above, safe(part.text, style), below) if note is not None]
