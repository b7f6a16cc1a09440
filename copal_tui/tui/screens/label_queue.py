"""The blind label queue (`copal label`): one response at a time, marked item by item.

Shows the query, the active clauses, the numbered contract items and the response; the derived
error and direction update as items are toggled; progress n/N stays on the status line. Blind by
default: the judge's marks and other annotators' labels appear only on a response this annotator
has already labelled (or everywhere with COPAL_BLIND=false); the responding model is a neutral
"Response" unless COPAL_SHOW_MODEL is set. The annotator's own latest note on a response is shown
again whenever they come back to it.

Every write (label, undo, skip, note, flag, lease) is one transaction through the app's line of
writes (copal_tui.tui.busy): committed before the key handler returns when the database is
free, so a dropped SSH session or kill -9 loses nothing already submitted. When another process
holds the database the write waits its turn while the screen goes on ("waiting for the
database"): the next response is then picked with reads and leased once the database is free.
The queue's campaign, order, overlap and leases live in copal_tui.annotation.queue (the one
queue of every suite). Preparing the queue (placing new responses, possibly many, and freezing
this annotator's queue at its first start) runs in a worker thread with its own connection.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from typing import Any

from rich.text import Text
from textual import work
from textual.binding import Binding

from copal_tui.annotation.queue import AnnotationQueue
from copal_tui.tui.busy import ATTEMPT_MS, QueueWrites, busy_timeout, is_busy
from copal_tui.tui.safe import one_line
from copal_tui.tui.screens.marking import MARK_BINDINGS, MarkingScreen
from copal_tui.tui.widgets.contract_marks import DIRECTION_WORDS, contract_items
from copal_tui.tui.widgets.marks_matrix import columns_for
from store.annotation import annotations as log
from store.annotation import labels as copal_sql
from store.annotation.annotations import Annotation
from store.db import Database

# Seconds before placing new responses in the queue is tried again when the database was busy.
ORDER_RETRY_S = 5.0


class LabelQueueScreen(QueueWrites, MarkingScreen):
    BINDINGS = [*MARK_BINDINGS,
                Binding("ctrl+r", "refresh", "reload", show=False, id="label.refresh")]
    PALETTE_PREFIX = "Label"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rid: str | None = None
        self.ctx: dict[str, Any] | None = None
        self.ready = False
        self.last_saved: Text | None = None
        self.queue: AnnotationQueue | None = None
        self.totals = {"total": 0, "filled": 0, "slots": 0}
        self.notes: dict[str, str] = {}  # notes written here (shown before they are saved)
        self.ordering = False  # new responses wait for the database to get their places

    # -------------------------------------------------------------- start

    def on_mount(self) -> None:
        super().on_mount()
        s = self.copal.settings
        self.queue = self._queue(self.copal.db)
        self.marks.clear("Preparing the queue\u2026")
        self.matrix.hide("")
        # Renew our lease well before it runs out while the annotator reads a long response.
        self.set_interval(max(5.0, s.lease_minutes * 60 / 3), self._renew)
        self._prepare()

    def _queue(self, db: Database) -> AnnotationQueue:
        s = self.copal.settings
        return AnnotationQueue(db, "copal", self.copal.annotator, campaign=self.copal.campaign,
                               overlap=s.overlap, lease_minutes=s.lease_minutes)

    @staticmethod
    def _totals(queue: AnnotationQueue) -> dict[str, int]:
        p = queue.progress()
        return {"total": p.total, "filled": p.filled, "slots": p.slots}

    @work(thread=True, exclusive=True, group="label-order")
    def _prepare(self) -> None:
        with self.copal.worker_db() as db:
            queue = self._queue(db)
            try:
                # Briefly: while another process writes (an import), start with the order
                # there is, and place the new responses once the database is free.
                with busy_timeout(db, ATTEMPT_MS):
                    queue.prepare(refresh=self.copal.refresh_queue)
                ordered = True
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                ordered = False
            totals = self._totals(queue)
        self._from_worker(self._prepared, totals, ordered)

    def _prepared(self, totals: dict[str, int], ordered: bool) -> None:
        self.ordering = not ordered
        if ordered:
            self.copal.refresh_queue = False  # refreshed once, at the start
        assert self.queue is not None
        self.queue.reload()  # the worker may have frozen this annotator's queue
        self.totals = totals
        if not ordered:
            self.set_timer(ORDER_RETRY_S, self._order_again)
        if not self.ready or self.rid is None:
            self.ready = True
            self._next()
        else:
            self._status()

    def _order_again(self) -> None:
        self._prepare()

    @work(thread=True, exclusive=True, group="label-totals")
    def _count(self) -> None:
        """Recount the queue's totals (a scan of the queue) off the UI thread."""
        with self.copal.worker_db() as db:
            totals = self._totals(self._queue(db))
        self._from_worker(self._got_totals, totals)

    def _from_worker(self, callback: Any, *args: Any) -> None:
        with suppress(RuntimeError):  # the app closed while the worker ran
            self.app.call_from_thread(callback, *args)

    def _got_totals(self, totals: dict[str, int]) -> None:
        self.totals = totals
        self._status()

    def _renew(self) -> None:
        if self.rid is not None:
            self._lease(self.rid)

    # -------------------------------------------------------------- leases and the next one

    def _lease(self, rid: str) -> None:
        """Keep (or retake) our slot on `rid`; waits its turn when the database is busy."""
        queue = self.queue
        assert queue is not None
        self.write(f"lease on #{self._pos(rid)}", lambda _db: queue.renew(rid), keep=False,
                   key=f"lease:{rid}")

    def _next(self) -> None:
        """Where we left off, else a new slot: leased at once when the database is free;
        when it is busy, picked with reads (never a response whose label still waits) and
        leased once the database is free."""
        queue = self.queue
        assert queue is not None
        if self.write_now(lambda _db: queue.resume(), self._show):
            return
        rid = self._candidate()
        self._show(rid)
        if rid is not None:
            self._lease(rid)

    def _candidate(self) -> str | None:
        assert self.queue is not None
        return self.queue.candidate(skip=self.pending())

    def _pos(self, rid: str | None) -> int | None:
        assert self.queue is not None
        return self.queue.position(rid)

    # -------------------------------------------------------------- display

    def has_current(self) -> bool:
        return self.ready and self.rid is not None and self.ctx is not None

    def _mine(self) -> Annotation | None:
        if self.rid is None or self.queue is None:
            return None
        return self.queue.current(self.rid)

    def _show(self, rid: str | None, marks: list[str] | None = None) -> None:
        self.rid = rid
        db = self.copal.db
        self.ctx = None if rid is None else copal_sql.response_context(db, rid)
        if self.ctx is None:
            self.rid = None
            self.context_pane.show(None, (
                "Another process is writing to the database: new responses join the queue "
                "as soon as it is free. " if self.ordering else
                "Nothing left for you in the queue: every response has its labels or is "
                "being labelled. ") + "\u2190 goes back to your labels; q quits.")
            self.marks.clear("")
            self.matrix.hide("")
            self._status()
            return
        assert rid is not None
        mine = self._mine()
        if marks is None:
            marks = list(mine.get("observed") or []) if mine else []
        items = contract_items(self.ctx["required"], self.ctx["forbidden"])
        title = "Contract (your label: relabel with enter)" if mine else "Contract"
        self._show_context()
        self.marks.set_contract(items, marks, title=title)
        self._reveal(mine is not None)
        self._status()

    def _show_context(self) -> None:
        assert self.rid is not None
        note = self.notes.get(self.rid) or log.latest_note(
            self.copal.db, "copal", self.rid, self.copal.annotator)
        self.context_pane.show(self.ctx, show_model=self.copal.settings.show_model, note=note)

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
        cols = columns_for([lab.row() for lab in log.labels_of(db, "copal", self.rid)],
                           copal_sql.judgments_of(db, self.rid))
        self.matrix.show(items, cols, title="Labels and judges (you have labelled this)"
                         if labelled else "Labels and judges (not blind)",
                         notes=[r.row() for r in log.remarks(db, "copal", self.rid)])

    def _status(self) -> None:
        """Progress n/N (our labels of the queue; N counted by a worker) and the last action."""
        assert self.queue is not None
        t = self.totals
        out = Text(f" {one_line(self.copal.annotator, 24)} ", style="bold reverse")
        out.append(f" {self.queue.tally(total=t['total'])} ", style="bold")
        out.append(f"\u00b7 slots {t['filled']}/{t['slots']} (overlap {self.queue.overlap}) ",
                   style="dim")
        if self.rid is not None:
            out.append(f"\u00b7 #{self._pos(self.rid)} ", style="dim")
        if self.ordering:
            out.append("\u00b7 waiting for the database to add new responses ", style="yellow")
        out.append_text(self.waiting_text())
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
        assert self.rid is not None
        if observed is not None:
            self.marks.set_observed(observed)
        rid, queue, marks = self.rid, self.queue, list(self.marks.observed)
        assert queue is not None

        def landed(done: Annotation) -> None:
            error, direction = done.get("error"), done.get("direction")
            self._saved(f"saved e={error} {DIRECTION_WORDS[direction]}"
                        if error else "saved e=0 correct")
            self._count()

        # The label renews the lease in the same transaction (the label now owns the slot).
        if not self.write(f"label on #{self._pos(rid)}",
                          lambda _db: queue.submit(rid, observed=marks), landed, subject=rid):
            self.last_saved = None  # the status says what waits
        self._advance()

    def _advance(self) -> None:
        """After a label: the next response on our trail (when relabelling an earlier one),
        else where we left off, else a new slot."""
        assert self.queue is not None
        nxt, skip = self.rid, self.pending()
        while nxt is not None:
            nxt = self.queue.step(nxt, forward=True)
            if nxt not in skip:
                break
        if nxt is not None:
            self._show(nxt)
        else:
            self._next()

    def action_undo(self) -> None:
        if not self.ready:
            self.app.bell()
            return
        queue = self.queue
        assert queue is not None
        self.write("undo of your last label", lambda _db: queue.undo(), self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify("Nothing to undo: you have no current label.", severity="warning")
            return
        # The undo renewed our lease on it in the same transaction.
        rid, marks = undone.subject, list(undone.get("observed") or [])
        self._saved(f"undid your label on #{self._pos(rid)}", style="yellow")
        self._show(rid, marks)
        self._count()

    def action_skip(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        assert self.queue is not None and self.rid is not None
        rid, queue, pos = self.rid, self.queue, self._pos(self.rid)
        # The skip gives the slot back in the same transaction.
        if not self.write(f"skip of #{pos}", lambda _db: queue.skip(rid),
                          lambda _id: self._saved("skipped", style="yellow"), subject=rid):
            self.last_saved = None
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
        self._lease(target)
        self._show(target)

    def action_refresh(self) -> None:
        self._show(self.rid)
        self._count()

    def save_note(self, text: str | None) -> None:
        if text and self.rid is not None:
            rid, queue = self.rid, self.queue
            assert queue is not None
            self.notes[rid] = text
            self.write(f"note on #{self._pos(rid)}", lambda _db: queue.note(rid, text),
                       lambda _id: self._saved("note saved"))
            self._show_context()
            self._status()

    def save_flag(self, reason: str | None) -> None:
        if reason and self.rid is not None:
            rid, queue = self.rid, self.queue
            assert queue is not None
            self.write(f"flag on #{self._pos(rid)}", lambda _db: queue.flag(rid, reason),
                       lambda _id: self._saved(f"flagged: {reason}", style="yellow"))
            self._status()

    def leave(self) -> None:
        if self.queue is not None and self.rid is not None:
            rid, queue = self.rid, self.queue
            # A lease, not a label: if the database is busy it simply expires.
            self.write("release", lambda _db: queue.release(rid), keep=False)
