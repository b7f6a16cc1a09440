"""The label (or decision) being built on one traffic pair: its policy category (keys 0-2: how
many policies the request engages, none / single / multi), whether the response is erroneous
(c correct, v erroneous: COMPASS's compliant/violates keys), optionally which of the linked
world's policies apply (o opens the picker), the residual-sensitive flag (f) and a note (e).

Holds the choices and draws them, each marked with a symbol and words (never colour alone), in
lines short enough for the form pane at 80 columns. The payload model is built by the screen
from these choices (`copal_tui.domain.traffic.TrafficLabel`, whose rules say what may go
together).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from copal_tui.domain.traffic import CATEGORIES, CATEGORY_TITLES
from copal_tui.services.annotation.views import Annotation
from copal_tui.tui.safe import one_line, safe

ON, OFF = "\u25cf", "\u25cb"
# Key n chooses CATEGORIES[n]: how many policies the request engages (0, 1, 2 or more).
CATEGORY_KEYS = {str(n): category for n, category in enumerate(CATEGORIES)}


class TrafficForm(Static):
    def __init__(self, heading: str = "Your label", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.heading = heading
        self.category: str | None = None
        self.erroneous: bool | None = None
        self.policies: list[str] = []
        self.sensitive = False
        self.note: str | None = None
        self.relabel = False
        self.linked = False  # the pair's log is linked to a world: policies may be named

    # -------------------------------------------------------------- state

    def reset(self, label: Annotation | None = None, *, relabel: bool = False,
              linked: bool = False) -> None:
        """Start over on a pair, prefilled from `label` (the person's own current label or
        decision, or the one they just undid)."""
        self.relabel, self.linked = relabel, linked
        self.category = None if label is None else label.get("category")
        value = None if label is None else label.get("erroneous")
        self.erroneous = None if value is None else bool(value)
        self.policies = [] if label is None else list(label.get("policies") or [])
        self.sensitive = bool(label is not None and label.get("sensitive"))
        self.note = None if label is None else label.get("note")
        self._redraw()

    def clear(self) -> None:
        self.reset(None)

    def set_category(self, category: str) -> None:
        self.category = category
        self._redraw()

    def set_erroneous(self, value: bool) -> None:
        self.erroneous = value
        self._redraw()

    def set_policies(self, policies: list[str]) -> None:
        self.policies = list(policies)
        self._redraw()

    def toggle_sensitive(self) -> None:
        self.sensitive = not self.sensitive
        self._redraw()

    def set_note(self, note: str | None) -> None:
        self.note = note
        self._redraw()

    @property
    def complete(self) -> bool:
        """Enough to submit: a category and a verdict, or the sensitive flag."""
        return self.sensitive or (self.category is not None and self.erroneous is not None)

    # -------------------------------------------------------------- drawing

    def _redraw(self) -> None:
        if self.is_mounted:
            self.update(self.render_form())

    def render_form(self) -> Text:
        out = Text(self.heading + (" (saved: enter relabels)" if self.relabel else ""),
                   style="bold underline")
        out.append("\nPolicy category\n", style="bold")
        for key, category in CATEGORY_KEYS.items():
            self._option(out, key, f"{category} ({CATEGORY_TITLES[category].lower()})",
                         self.category == category)
        out.append("Response\n", style="bold")
        self._option(out, "c", "correct", self.erroneous is False)
        self._option(out, "v", "erroneous", self.erroneous is True)
        if self.linked:
            out.append("Policies that apply (o picks)\n", style="bold")
            named = ", ".join(self.policies)
            out.append_text(safe(f"  {one_line(named, 60)}" if named else "  none named",
                                 style="" if named else "dim"))
            out.append("\n")
        else:
            out.append("No linked world: no policies to name\n", style="dim")
        out.append("Sensitive content (f): ", style="bold")
        out.append("FLAGGED\n" if self.sensitive else "no\n",
                   style="bold reverse" if self.sensitive else "")
        out.append("Note (e): ", style="bold")
        out.append_text(safe(one_line(self.note, 60)) if self.note
                        else Text("none", style="dim"))
        out.append("\n")
        if self.sensitive:
            out.append("\u2192 flagged: it leaves the figures; category and verdict are "
                       "optional; enter submits", style="dim")
        elif self.complete:
            out.append("\u2192 enter submits", style="dim")
        else:
            out.append("\u2192 choose 0-2 and c or v; enter submits", style="dim")
        return out

    @staticmethod
    def _option(out: Text, key: str, words: str, on: bool) -> None:
        out.append(f" {ON if on else OFF} {key} {words}", style="bold reverse" if on else "")
        out.append("\n")

    def on_mount(self) -> None:
        self._redraw()
