"""The blind label queue (`copal label`): one response at a time, marked item by item.

Shows the query, the active clauses, the numbered contract items and the response; the derived
error and direction update as items are toggled; progress n/N stays on the status line. Blind by
default: the judge's marks and other annotators' labels appear only on a response this annotator
has already labelled (or everywhere with COPAL_BLIND=false).

Every write (label, undo, skip, note, flag, lease) is one committed transaction made before the
key handler returns, so a dropped SSH session or kill -9 loses nothing already submitted; the
queue's order, overlap and leases live in copal_tui.labelqueue. Filling the queue order for new
responses (possibly many) runs in a worker thread with its own connection.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from rich.text import Text
from textual import work
from textual.binding import Binding

from copal_tui.labelqueue import LabelQueue, ensure_order
from copal_tui.tui.safe import one_line
from copal_tui.tui.screens.marking import MARK_BINDINGS, MarkingScreen
from copal_tui.tui.widgets.contract_marks import DIRECTION_WORDS, contract_items
from copal_tui.tui.widgets.marks_matrix import columns_for
from store import queue_sql
from store.db import StoreError


class LabelQueueScreen(MarkingScreen):
    BINDINGS = [*MARK_BINDINGS,
                Binding("ctrl+r", "refresh", "reload", show=False, id="label.refresh")]
    PALETTE_PREFIX = "Label"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rid: str | None = None
        self.ctx: dict[str, Any] | None = None
        self.ready = False
        self.last_saved: Text | None = None
        self.queue: LabelQueue | None = None
        self.totals = {"total": 0, "filled": 0, "slots": 0}

    # -------------------------------------------------------------- start

    def on_mount(self) -> None:
        super().on_mount()
        s = self.copal.settings
        self.queue = LabelQueue(self.copal.db, self.copal.annotator,
                                overlap=s.overlap, lease_minutes=s.lease_minutes)
        self.marks.clear("Preparing the queue\u2026")
        self.matrix.hide("")
        # Renew our lease well before it runs out while the annotator reads a long response.
        self.set_interval(max(5.0, s.lease_minutes * 60 / 3), self._renew)
        self._prepare()

    @work(thread=True, exclusive=True, group="label-order")
    def _prepare(self) -> None:
        with self.copal.worker_db() as db:
            ensure_order(db)
            totals = queue_sql.queue_totals(db, self.copal.settings.overlap)
        self._from_worker(self._start, totals)

    @work(thread=True, exclusive=True, group="label-totals")
    def _count(self) -> None:
        """Recount the queue's totals (a scan of the queue) off the UI thread."""
        with self.copal.worker_db() as db:
            totals = queue_sql.queue_totals(db, self.copal.settings.overlap)
        self._from_worker(self._got_totals, totals)

    def _from_worker(self, callback: Any, *args: Any) -> None:
        with suppress(RuntimeError):  # the app closed while the worker ran
            self.app.call_from_thread(callback, *args)

    def _start(self, totals: dict[str, int]) -> None:
        self.ready = True
        self.totals = totals
        assert self.queue is not None
        self._show(self.queue.resume())

    def _got_totals(self, totals: dict[str, int]) -> None:
        self.totals = totals
        self._status()

    def _renew(self) -> None:
        if self.queue is not None and self.rid is not None:
            self.queue.renew(self.rid)

    # -------------------------------------------------------------- display

    def has_current(self) -> bool:
        return self.ready and self.rid is not None and self.ctx is not None

    def _mine(self) -> dict[str, Any] | None:
        if self.rid is None or self.queue is None:
            return None
        return self.queue.label(self.rid)

    def _show(self, rid: str | None, marks: list[str] | None = None) -> None:
        self.rid = rid
        db = self.copal.db
        self.ctx = None if rid is None else queue_sql.response_context(db, rid)
        if self.ctx is None:
            self.rid = None
            self.context_pane.show(None, "Nothing left for you in the queue: every response "
                                   "has its labels or is being labelled. \u2190 goes back to "
                                   "your labels; q quits.")
            self.marks.clear("")
            self.matrix.hide("")
            self._status()
            return
        mine = self._mine()
        if marks is None:
            marks = list(mine["observed"] or []) if mine else []
        items = contract_items(self.ctx["required"], self.ctx["forbidden"])
        title = "Contract (your label: relabel with enter)" if mine else "Contract"
        self.context_pane.show(self.ctx)
        self.marks.set_contract(items, marks, title=title)
        self._reveal(mine is not None)
        self._status()

    def _reveal(self, labelled: bool) -> None:
        blind = self.copal.settings.blind
        if self.ctx is None or self.rid is None:
            return
        if blind and not labelled:
            self.matrix.hide("Blind: the judge's marks and other labels appear once you "
                             "have submitted your own.")
            return
        db = self.copal.db
        items = contract_items(self.ctx["required"], self.ctx["forbidden"])
        cols = columns_for(queue_sql.labels_of(db, self.rid),
                           queue_sql.judgments_of(db, self.rid))
        self.matrix.show(items, cols, title="Labels and judges (you have labelled this)"
                         if labelled else "Labels and judges (not blind)",
                         notes=queue_sql.remarks_of(db, self.rid))

    def _status(self) -> None:
        """Progress n/N (our labels of the queue; N counted by a worker) and the last action."""
        assert self.queue is not None
        t = self.totals
        out = Text(f" {one_line(self.copal.annotator, 24)} ", style="bold reverse")
        out.append(f" {self.queue.mine()}/{t['total']} labelled ", style="bold")
        out.append(f"\u00b7 slots {t['filled']}/{t['slots']} (overlap {self.queue.overlap}) ",
                   style="dim")
        if self.rid is not None:
            out.append(f"\u00b7 #{queue_sql.position_of(self.copal.db, self.rid)} ", style="dim")
        if self.last_saved is not None:
            out.append_text(self.last_saved)
        self.set_status(out)

    def marks_changed(self) -> None:
        pass  # the verdict line is part of ContractMarks and redraws with it

    # -------------------------------------------------------------- actions

    def _saved(self, what: str, style: str = "green") -> None:
        self.last_saved = Text(f"\u00b7 {what}", style=style)

    def action_submit(self) -> None:
        self._submit(None)

    def action_correct(self) -> None:
        if self.has_current():
            assert self.ctx is not None
            self._submit([c["id"] for c in self.ctx["required"]])
        else:
            self.app.bell()

    def _submit(self, observed: list[str] | None) -> None:
        if not self.has_current():
            self.app.bell()
            return
        assert self.queue is not None and self.rid is not None
        if observed is not None:
            self.marks.set_observed(observed)
        try:
            done = self.queue.submit(self.rid, self.marks.observed)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        self._saved(f"saved e={done.error} {DIRECTION_WORDS[done.direction]}"
                    if done.error else "saved e=0 correct")
        self._advance()
        self._count()

    def _advance(self) -> None:
        """After a label: the next response on our trail (when relabelling an earlier one),
        else where we left off, else a new slot."""
        assert self.queue is not None
        nxt = self.queue.step(self.rid, forward=True) if self.rid else None
        self._show(nxt if nxt is not None else self.queue.resume())

    def action_undo(self) -> None:
        if not self.ready:
            self.app.bell()
            return
        assert self.queue is not None
        undone = self.queue.undo()
        if undone is None:
            self.notify("Nothing to undo: you have no current label.", severity="warning")
            return
        rid, marks = undone
        self._saved(f"undid your label on #{queue_sql.position_of(self.copal.db, rid)}",
                    style="yellow")
        self._show(rid, marks)
        self._count()

    def action_skip(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        assert self.queue is not None and self.rid is not None
        self.queue.skip(self.rid)
        self._saved("skipped", style="yellow")
        self._advance()

    def action_move(self, delta: int) -> None:
        if not self.ready:
            self.app.bell()
            return
        assert self.queue is not None
        if self.rid is None:
            # Past the end of the queue: left goes back to our latest label.
            target = self.queue.step_last() if delta < 0 else None
        else:
            target = self.queue.step(self.rid, forward=delta > 0)
        if target is None:
            self.notify("No earlier response of yours." if delta < 0 else
                        "This is your newest response: enter, c or s moves on.",
                        severity="information", timeout=2)
            return
        self.queue.renew(target)
        self._show(target)

    def action_refresh(self) -> None:
        self._show(self.rid)
        self._count()

    def save_note(self, text: str | None) -> None:
        if text and self.rid is not None and self.queue is not None:
            self.queue.note(self.rid, text)
            self._saved("note saved")
            self._status()

    def save_flag(self, reason: str | None) -> None:
        if reason and self.rid is not None and self.queue is not None:
            self.queue.flag(self.rid, reason)
            self._saved(f"flagged: {reason}", style="yellow")
            self._status()

    def leave(self) -> None:
        if self.queue is not None and self.rid is not None:
            with suppress(StoreError):  # else the lease simply expires
                self.queue.release(self.rid)
