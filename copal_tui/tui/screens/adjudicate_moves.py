"""The moves every adjudication screen shares (COPAL's responses, the traffic suite's pairs):
skip to the next pending subject, step through the candidates, filter them, redraw. A screen
says which subject is shown (`subject`), whether one is ready to decide (`has_current`), how
to step from a subject (`_step`), and shows one (`_show`, `_next_pending`, `_recount`).
"""

from __future__ import annotations

from typing import ClassVar

from textual.widgets import Input

from copal_tui.tui.screens.label_base import LabelScreen


class AdjudicationMoves(LabelScreen):
    FILTER_ID: ClassVar[str]  # the id of the screen's filter box
    search: str

    @property
    def subject(self) -> str | None:
        raise NotImplementedError

    def has_current(self) -> bool:
        return self.subject is not None

    def _step(self, after: str, forward: bool) -> str | None:
        """The candidate after (or before) `after` matching the filter, if any."""
        raise NotImplementedError

    def _show(self, subject: str | None) -> None:
        raise NotImplementedError

    def _next_pending(self, after: str) -> str | None:
        raise NotImplementedError

    def _recount(self) -> object:
        """Refresh the decided/pending counts (a worker on both screens)."""
        raise NotImplementedError

    def action_skip(self) -> None:
        subject = self.subject
        if not self.has_current() or subject is None:
            self.app.bell()
            return
        self._saved("skipped", style="yellow")
        nxt = self._next_pending(subject)
        self._show(None if nxt == subject else nxt)

    def action_move(self, delta: int) -> None:
        after = self.subject if self.subject is not None else ("" if delta > 0 else "\uffff")
        target = self._step(after, delta > 0)
        if target is None:
            self.notify("No more candidates that way.", timeout=2)
            return
        self._show(target)

    def action_filter(self) -> None:
        box = self.query_one(f"#{self.FILTER_ID}", Input)
        box.add_class("-shown")
        box.value = self.search
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.remove_class("-shown")
        self.search = event.value.strip()
        self._show(self._next_pending(""))
        self._recount()

    def action_refresh(self) -> None:
        self._show(self.subject)
