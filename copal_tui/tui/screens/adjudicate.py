"""Adjudication (`copal adjudicate`): responses where annotators disagree, or where the human
reference and a judge disagree, with every annotator's and judge's marks side by side.

The adjudicator decides with the label queue's keys (the labelling base's common keys: enter
decides, u undoes their last decision, s skips, n/p or left/right move through all candidates,
e attaches a note to the decision, f flags, q quits; and the marking keys: 1-9 toggle, c
decides "correct"); `/` filters the candidates (world, model, pattern, id or reason). A
decision is an adjudicator's label appended to the annotation log (undo appends an undo event;
copal_tui.services.annotation.adjudication). While a response is on screen the adjudicator
holds a lease on it, so two adjudicators at once are not handed the same response. Every write
(decision, undo, flag, lease) goes through the app's line of writes (copal_tui.tui.busy):
committed at once when the database is free, waiting its turn ("waiting for the database")
while another process holds it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from copal_tui.services.annotation import adjudication as adj
from copal_tui.services.annotation.views import (
    Annotation,
    ResponseContext,
    copal_context,
    copal_remarks,
    copal_reveal,
)
from copal_tui.tui.safe import SHOWN, one_line
from copal_tui.tui.screens.adjudicate_moves import AdjudicationMoves
from copal_tui.tui.screens.marking import MARK_BINDINGS, Marking, remark_rows, reveal_columns
from copal_tui.tui.widgets.contract_marks import DIRECTION_WORDS, contract_items
from copal_tui.tui.widgets.marks_matrix import MarksMatrix


class AdjudicateScreen(Marking, AdjudicationMoves):
    FILTER_ID = "adjudicate-filter"
    BINDINGS = [*MARK_BINDINGS,
                Binding("slash", "filter", "filter", show=False, id="adjudicate.filter"),
                Binding("ctrl+r", "refresh", "reload", show=False, id="adjudicate.refresh")]
    PALETTE_PREFIX = "Adjudicate"
    MATRIX_FIRST = True
    SUITE_KEYS = ("label.", "Adjudication: mark the contract")
    NOTE_TITLE = "Note for your decision"
    DEFAULT_CSS = """
    AdjudicateScreen #adjudicate-filter { height: 1; border: none; padding: 0 1; display: none; }
    AdjudicateScreen #adjudicate-filter.-shown { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rid: str | None = None
        self.ctx: ResponseContext | None = None
        self.search = ""
        self.note: str | None = None
        self.counts = adj.Counts()

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Input(placeholder="filter: world, model, pattern, id or reason; enter applies",
                    id="adjudicate-filter", compact=True)

    def on_mount(self) -> None:
        super().on_mount()
        self._show(self._next_pending(""))
        self._recount()

    @property
    def remarks(self) -> MarksMatrix:
        return self.query_one("#marks-remarks", MarksMatrix)

    @property
    def who(self) -> str:
        return str(self.copal.annotator)

    # -------------------------------------------------------------- candidates

    def _next_pending(self, after: str) -> str | None:
        return adj.next_pending(self.copal.db, after, self.search, self.who, self.pending())

    def has_current(self) -> bool:
        return self.rid is not None and self.ctx is not None

    def _show(self, rid: str | None, marks: list[str] | None = None) -> None:
        db, who = self.copal.db, self.who
        minutes = self.copal.settings.lease_minutes
        if self.rid is not None and self.rid != rid:
            self._release(self.rid)
        self.rid, self.note = rid, None
        self.ctx = None if rid is None else copal_context(db, rid, SHOWN)
        if self.ctx is None or rid is None:
            self.rid = None
            self.context_pane.show(None, "Nothing to adjudicate" + (
                f" matching {one_line(self.search, 30)!r}" if self.search else "") +
                ": no undecided response where annotators, or annotators and a judge, "
                "disagree. p/n browse decided ones; / filters; q quits.")
            self.marks.clear("")
            self.matrix.hide("")
            self.remarks.hide("")
            self.reset_reading()
            self._status()
            return
        self.write("lease", lambda db: adj.lease_adjudication(db, rid, who, minutes),
                   self._held, keep=False, key=f"lease:{rid}")
        current = adj.current_decision(db, rid)
        if marks is None:
            marks = list(current.get("observed") or []) if current else []
        items = contract_items(self.ctx.required, self.ctx.forbidden)
        self.context_pane.show(self.ctx)
        self.marks.set_contract(items, marks, title="Your decision" + (
            " (decided: enter re-decides)" if current else ""))
        seen = copal_reveal(db, rid)
        cols = reveal_columns(seen, current)
        self.matrix.show(items, cols, title=f"Why here: {adj.reason(db, rid) or 'not a candidate'}")
        self.remarks.show(items, cols, notes=remark_rows(seen.remarks))
        self.reset_reading()
        self._status()

    def _held(self, held: bool) -> None:
        if not held:
            self.notify("Another adjudicator has this response open.", severity="warning")

    def _release(self, rid: str) -> None:
        who = self.who
        # A lease, not a decision: if the database stays busy it simply expires.
        self.write("release", lambda db: adj.release_adjudication(db, rid, who), keep=False)

    def _count(self, db: Any, search: str) -> adj.Counts:
        return adj.counts(db, search)

    def _status(self) -> None:
        counts = self.counts
        extra = [Text(f"\u00b7 filter {one_line(self.search, 30)!r} " if self.search
                      else "\u00b7 / filters ", style="dim")]
        if self.note:
            extra.append(Text("\u00b7 note pending ", style="yellow"))
        self.set_status(self.status_line(f"{counts.decided}/{counts.total} decided", *extra))

    # -------------------------------------------------------------- actions

    def action_submit(self) -> None:
        self._decide(None)

    def action_correct(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        assert self.ctx is not None
        self._decide([c["id"] for c in self.ctx.required])

    def _decide(self, observed: list[str] | None) -> None:
        from copal_tui.domain.annotation.payloads import CopalLabel

        if not self.has_current():
            self.app.bell()
            return
        assert self.rid is not None and self.ctx is not None
        if observed is not None:
            self.marks.set_observed(observed)
        rid, who = self.rid, self.who
        # The rule the marks pane shows its verdict by, on the contract it shows.
        decision = CopalLabel.from_marks(self.ctx.required, self.ctx.forbidden,
                                         self.marks.observed, note=self.note)

        def landed(done: Annotation) -> None:
            error = done.get("error")
            self._saved(f"decided e={error} " +
                        (DIRECTION_WORDS[done.get("direction")] if error else "correct"))
            self._recount()

        if not self.write("decision", lambda db: adj.decide(db, "copal", rid, who, decision),
                          landed, subject=rid):
            self.last_saved = None  # the status says what waits
        self._show(self._next_pending(rid))

    def action_undo(self) -> None:
        who = self.who
        self.write("undo of your last decision", lambda db: adj.undo_adjudication(db, who),
                   self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify("Nothing to undo: you have no current decision.", severity="warning")
            return
        rid, marks = undone.subject, list(undone.get("observed") or [])
        self._saved("undid your decision", style="yellow")
        self._show(rid, marks)
        self._recount()

    @property
    def subject(self) -> str | None:
        return self.rid

    def _step(self, after: str, forward: bool) -> str | None:
        return adj.step(self.copal.db, after, forward, self.search)

    def save_note(self, text: str | None) -> None:
        if text:
            self.note = text
            self._saved("note kept for your decision")
            self._status()

    def save_flag(self, reason: str | None) -> None:
        from copal_tui.domain.annotation.payloads import Remark

        if reason and self.rid is not None:
            rid, who, flag = self.rid, self.who, Remark(flag=reason)
            self.write("flag", lambda db: adj.flag(db, rid, who, flag),
                       lambda _id: self._flagged(rid, reason))
            self._status()

    def _flagged(self, rid: str, reason: str) -> None:
        self._saved(f"flagged: {reason}", style="yellow")
        if rid == self.rid:
            self.remarks.show(self.marks.items, self.remarks.columns,
                              notes=remark_rows(copal_remarks(self.copal.db, rid)))

    def leave(self) -> None:
        if self.rid is not None:
            self._release(self.rid)
