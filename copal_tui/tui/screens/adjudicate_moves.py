"""The moves every adjudication screen shares (COPAL's responses, the traffic suite's pairs):
skip to the next pending subject, step through the candidates, filter them, redraw, and count
the decided ones off the UI thread. A screen says which subject is shown (`subject`), whether
one is ready to decide (`has_current`), how to step from a subject (`_step`) and to count
(`_count`), and shows one (`_show`, `_next_pending`, `_status`).
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.widgets import Input

from copal_tui.tui.screens.label_base import LabelScreen, load_payload_models

if TYPE_CHECKING:
    from copal_tui.services.annotation.adjudication import Counts
    from store.db import Database


class AdjudicationMoves(LabelScreen):
    FILTER_ID: ClassVar[str]  # the id of the screen's filter box
    search: str
    counts: Counts

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

    def _count(self, db: Database, search: str) -> Counts:
        """Candidates and decisions matching `search` (read in a worker thread)."""
        raise NotImplementedError

    def _status(self) -> None:
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="adjudicate-counts")
    def _recount(self) -> None:
        """Count candidates and decisions (reads every label) off the UI thread."""
        with self.copal.worker_db() as db:
            counts = self._count(db, self.search)
        with suppress(RuntimeError):  # the app closed while the worker ran
            self.app.call_from_thread(self._got_counts, counts)
        load_payload_models()

    def _got_counts(self, counts: Counts) -> None:
        self.counts = counts
        self._status()

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
