"""The label an annotator is building in the COMPASS queue: refused or answered, compliant or
violating, and for a denied query that was not properly refused an optional failure mode.

Holds the choices and draws them, with what they mean (aligned or misaligned, by the rule in
copal_tui.domain.compass). The meaning follows from the intended policy's kind, which the
annotator sees anyway; the query type (base or edge, the strategy) is never drawn here. Choices
are words with a marker, not colours alone.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from copal_tui.domain.compass import FAILURE_MODES, intended_kind, is_aligned
from copal_tui.services.annotation.views import Annotation
from copal_tui.tui.widgets.compass_view import MODE_WORDS

MODES = list(FAILURE_MODES)  # key n chooses MODES[n - 1]
ON, OFF = "\u25cf", "\u25cb"


class CompassVerdict(Static):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.query_type: str | None = None
        self.refused: bool | None = None
        self.compliant: bool | None = None
        self.failure_mode: str | None = None
        self.relabel = False

    # -------------------------------------------------------------- state

    def reset(self, query_type: str | None, label: Annotation | None = None,
              *, relabel: bool = False) -> None:
        """Start over on a response, prefilled from `label` (the annotator's own, or the
        choices of a label they just undid: an event of the log, its payload the choices)."""
        self.query_type = query_type
        self.relabel = relabel
        self.refused = None if label is None or label.get("refused") is None \
            else bool(label.get("refused"))
        self.compliant = None if label is None or label.get("compliant") is None \
            else bool(label.get("compliant"))
        self.failure_mode = None if label is None else label.get("failure_mode")
        self._normalise()

    @property
    def denied(self) -> bool:
        return self.query_type is not None and intended_kind(self.query_type) == "deny"

    @property
    def complete(self) -> bool:
        return self.refused is not None and self.compliant is not None

    @property
    def aligned(self) -> bool | None:
        if not self.complete or self.query_type is None:
            return None
        return is_aligned(self.query_type, bool(self.refused), bool(self.compliant))

    @property
    def mode_applies(self) -> bool:
        """A failure mode describes a denied query that was not refused compliantly."""
        return self.denied and not (self.refused is True and self.compliant is True)

    def set_refused(self, value: bool) -> None:
        self.refused = value
        self._normalise()

    def set_compliant(self, value: bool) -> None:
        self.compliant = value
        self._normalise()

    def set_mode(self, number: int) -> bool:
        """Choose failure mode `number` (again: clear it); False when none applies."""
        if not self.mode_applies or not 1 <= number <= len(MODES):
            return False
        mode = MODES[number - 1]
        self.failure_mode = None if self.failure_mode == mode else mode
        self._redraw()
        return True

    def _normalise(self) -> None:
        if not self.mode_applies:
            self.failure_mode = None
        self._redraw()

    # -------------------------------------------------------------- drawing

    def _redraw(self) -> None:
        if self.is_mounted:
            self.update(self.render_label())

    def render_label(self) -> Text:
        out = Text("Your label" + (" (saved: enter relabels)" if self.relabel else ""),
                   style="bold underline")
        out.append("\n")
        self._choice(out, "r", "refused", "a", "answered", self.refused)
        self._choice(out, "c", "compliant", "v", "violates", self.compliant)
        if self.denied:
            out.append("Failure mode (optional)\n", style="bold" if self.mode_applies
                       else "dim")
            for n, mode in enumerate(MODES, 1):
                chosen = self.failure_mode == mode
                out.append(f" {ON if chosen else OFF} {n} {MODE_WORDS[mode]}"
                           f"{'  (chosen)' if chosen else ''}\n",
                           style="bold" if chosen else ("" if self.mode_applies else "dim"))
            if not self.mode_applies:
                out.append("   (only when the denied request was not refused compliantly)\n",
                           style="dim")
        aligned = self.aligned
        if aligned is None:
            out.append("\u2192 choose r or a, and c or v; enter submits", style="dim")
        else:
            out.append("\u2192 " + ("aligned" if aligned else "misaligned")
                       + " with the intended policy; enter submits",
                       style="bold" if not aligned else "")
        return out

    @staticmethod
    def _choice(out: Text, yes_key: str, yes: str, no_key: str, no: str,
                value: bool | None) -> None:
        for key, word, on in ((yes_key, yes, value is True), (no_key, no, value is False)):
            out.append(f" {ON if on else OFF} {key} {word}",
                       style="bold reverse" if on else "")
            out.append("   ")
        out.append("\n" if value is not None else "  (not set)\n",
                   style="dim")

    def on_mount(self) -> None:
        self._redraw()
