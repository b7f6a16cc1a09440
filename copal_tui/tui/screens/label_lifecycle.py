"""The lifecycle of a queue label screen (COPAL, COMPASS, dialogue review), once for all three:
prepare the queue, show a subject, submit and advance, undo, skip, move, note, flag, keep a
lease on the subject on screen, and quit waiting for pending writes.

The queue itself (campaign, order, overlap, leases, done, undo) is
copal_tui.services.annotation.queue. Preparing it (placing new subjects, possibly many, and
freezing this annotator's queue at their first start) runs in a worker thread with its own
connection, retried while another process holds the database. Every write (label, undo, skip,
note, flag, lease) is one transaction through the app's line of writes (copal_tui.tui.busy):
committed before the key handler returns when the database is free, waiting its turn ("waiting
for the database") while it is busy; the next subject is then picked with reads, never one
whose label still waits.

One lease at a time: moving to another subject gives the previous one back, in one
transaction handed over once the new subject is on screen (its commit waits for the disk, which
the annotator need not watch); moves made before it lands (a key held down) hand over once,
from the subject left first to the one reached last. Any other write first lands a pending
handover, so writes still land in the order they were made.

A screen supplies: `load(subject)` (read what it shows), `render_subject(mine, undone)` and
`render_empty(message)` (draw it), `answer()` (its suite's payload model built from the form, or
None after saying what is missing) and `saved_words(label)` (the status line's confirmation).
The model goes to the queue as it is, and notes and flags go as a `Remark`; the payload models
(pydantic) are loaded by the preparing worker, off the UI thread, so starting a screen never
waits for them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work

from copal_tui.services.annotation.queue import AnnotationQueue, Progress
from copal_tui.services.annotation.views import Annotation
from copal_tui.tui.busy import ATTEMPT_MS, busy_timeout, is_busy
from copal_tui.tui.screens.label_base import LabelScreen, load_payload_models
from store.db import Database

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import LabelPayload

# Seconds before placing new subjects in the queue is tried again when the database was busy.
ORDER_RETRY_S = 5.0


class QueueLabelScreen(LabelScreen):
    SUITE = ""
    DONE_WORD = "labelled"  # "3/72 labelled"
    SUBJECT_WORD = "response"
    EMPTY = ("Nothing left for you in the queue: every {word} has your label or your skip, or "
             "is being labelled. p goes back; q quits.")
    # The queue has no subject at all: what is missing, and the command that adds it.
    NOTHING = "Nothing to label yet: the store has no {word} for this queue. q quits."

    def __init__(self, judge: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.judge = judge
        self.subject: str | None = None
        self.queue: AnnotationQueue | None = None
        self.progress = Progress(0, 0, 0, 0)
        self.counted = False
        self.ready = False
        self.ordering = False  # new subjects wait for the database to get their places
        self.notes: dict[str, str] = {}  # notes written here (shown before they are saved)
        # A handover waiting for the new subject to be drawn: the subject whose lease it gives
        # back (None: none); the subject it leases is whatever is shown when it runs.
        self._handover_pending = False
        self._handover_from: str | None = None
        # Positions never change in a campaign (subjects are only appended): read once each.
        self._positions: dict[str, int] = {}
        self._mine: int | None = None  # our label count for the status line, until a write

    # -------------------------------------------------------------- start

    def on_mount(self) -> None:
        super().on_mount()
        self.queue = self._queue(self.copal.db)
        self.render_empty("Preparing the queue\u2026")
        # Renew our lease well before it runs out while the annotator reads a long subject.
        self.set_interval(max(5.0, self.copal.settings.lease_minutes * 60 / 3), self._renew)
        self._prepare()

    def _queue(self, db: Database) -> AnnotationQueue:
        s = self.copal.settings
        return AnnotationQueue(db, self.SUITE, self.copal.annotator, campaign=self.copal.campaign,
                               judge=self.judge, overlap=s.overlap,
                               lease_minutes=s.lease_minutes)

    @work(thread=True, exclusive=True, group="label-prepare")
    def _prepare(self) -> None:
        with self.copal.worker_db() as db:
            queue = self._queue(db)
            try:
                # Briefly: while another process writes (an import), start with the order
                # there is, and place the new subjects once the database is free.
                with busy_timeout(db, ATTEMPT_MS):
                    queue.prepare(refresh=self.copal.refresh_queue)
                ordered = True
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                ordered = False
            progress = queue.progress()
        self._from_worker(self._prepared, progress, ordered)
        load_payload_models()

    def _from_worker(self, callback: Any, *args: Any) -> None:
        with suppress(RuntimeError):  # the app closed while the worker ran
            self.app.call_from_thread(callback, *args)

    def _prepared(self, progress: Progress, ordered: bool) -> None:
        assert self.queue is not None
        self.ordering = not ordered
        if ordered:
            self.copal.refresh_queue = False  # refreshed once, at the start
        else:
            self.set_timer(ORDER_RETRY_S, self._prepare)
        self.queue.reload()  # the worker may have frozen this annotator's queue
        self._mine = None
        self.progress, self.counted = progress, True
        if not self.ready or self.subject is None:
            self.ready = True
            self._show(self._first())
        else:
            self._status()

    @work(thread=True, exclusive=True, group="label-count")
    def _count(self) -> None:
        """Recount the queue's totals (a scan of the queue) off the UI thread."""
        with self.copal.worker_db() as db:
            progress = self._queue(db).progress()
        self._from_worker(self._counted, progress)

    def _counted(self, progress: Progress) -> None:
        self.progress, self._mine = progress, None
        self._status()

    # -------------------------------------------------------------- leases, picking

    def _renew(self) -> None:
        if self.subject is not None:
            self._lease(self.subject)

    def _lease(self, subject: str) -> None:
        queue = self.queue
        assert queue is not None
        self.write(f"lease on #{self.pos(subject)}", lambda _db: queue.renew(subject),
                   keep=False, key=f"lease:{subject}")

    def _release(self, subject: str) -> None:
        queue = self.queue
        assert queue is not None
        # A lease, not a label: if the database is busy it simply expires.
        self.write("release", lambda _db: queue.release(subject), keep=False)

    def _move_lease(self, old: str | None, new: str | None) -> None:
        """Hand the lease from `old` over to `new` after the next frame (see the module's
        docstring); a handover still waiting keeps its `old`."""
        if not self._handover_pending:
            self._handover_pending, self._handover_from = True, old
            self.call_after_refresh(self._hand_over)

    def _hand_over(self) -> None:
        if not self._handover_pending:
            return  # landed already, before another write
        self._handover_pending = False
        old, new, queue = self._handover_from, self.subject, self.queue
        assert queue is not None
        if old == new:
            return  # back where it started before the frame: the lease is still ours
        if new is None:
            if old is not None:
                self._release(old)
            return
        # Like a lease: if the database is busy it is retried in order, and a release that
        # never happens simply expires.
        self.write(f"lease on #{self.pos(new)}", lambda _db: queue.move(old, new),
                   keep=False, key=f"lease:{new}")

    def write(self, what: str, run: Callable[[Database], Any],
              done: Callable[[Any], None] | None = None, *, keep: bool = True,
              subject: Any = None, key: str | None = None) -> bool:
        """The base's write, after any handover still waiting (writes land in order); a
        write that may change our labels makes the status line count them again."""
        self._hand_over()
        if keep:
            self._mine = None  # before too: `done` may redraw the status as it lands
        landed = super().write(what, run, done, keep=keep, subject=subject, key=key)
        if keep:
            self._mine = None
        return landed

    def writes_changed(self) -> None:
        self._mine = None  # a waiting write may have landed
        super().writes_changed()

    def leave(self) -> None:
        self._hand_over()
        if self.subject is not None and self.queue is not None:
            self._release(self.subject)

    def pos(self, subject: str | None) -> int | None:
        assert self.queue is not None
        if subject is None:
            return None
        found = self._positions.get(subject)
        if found is None:
            found = self.queue.position(subject)
            if found is not None:
                self._positions[subject] = found
        return found

    def _first(self) -> str | None:
        """Where we left off (our live unfinished lease), else the first subject open to us."""
        queue, skip = self.queue, self.pending()
        assert queue is not None
        got: list[str | None] = []
        if self.write_now(lambda _db: queue.resume(skip), got.append):
            return got[0] if got else None
        return queue.candidate(0, skip)

    def following(self) -> str | None:
        """After a label or a skip: the next subject we are not done with after this one,
        else from the start (subjects passed over with n are still open)."""
        assert self.queue is not None
        for after in dict.fromkeys((self.pos(self.subject) or 0, 0)):
            nxt = self.take_from(self.queue, after)
            if nxt is not None:
                return nxt
        return None

    def neighbour(self, forward: bool) -> str | None:
        """Where n/p go: the next (previous) subject of the queue, done or not."""
        assert self.queue is not None
        return self.queue.neighbour(self.subject, forward)

    # -------------------------------------------------------------- display

    def has_current(self) -> bool:
        return self.ready and self.subject is not None

    def load(self, subject: str) -> bool:
        """Read what the screen shows for `subject`; False when it is gone."""
        raise NotImplementedError

    def render_subject(self, mine: Annotation | None, undone: Annotation | None) -> None:
        raise NotImplementedError

    def render_empty(self, message: str) -> None:
        raise NotImplementedError

    def _show(self, subject: str | None, undone: Annotation | None = None) -> None:
        queue = self.queue
        assert queue is not None
        if subject != self.subject:
            self._move_lease(self.subject, subject)  # one lease at a time through the queue
        self.subject = subject
        if subject is None or not self.load(subject):
            self.subject = None
            self.render_empty(self.empty_message())
        else:
            self.render_subject(queue.current(subject), undone)
        self.reset_reading(end=self.READ_FROM_END)
        self._status()

    READ_FROM_END = False  # the dialogue review starts at the turn under review, the end

    def empty_message(self) -> str:
        if self.ordering:
            return ("Another process is writing to the database: new subjects join the queue "
                    "as soon as it is free. p goes back; q quits.")
        if self.counted and not self.progress.total:
            return self.NOTHING.format(word=self.SUBJECT_WORD)
        return self.EMPTY.format(word=self.SUBJECT_WORD)

    def status_extra(self) -> list[Text]:
        return []

    def _status(self) -> None:
        assert self.queue is not None
        total = self.progress.total if self.counted else None
        extra = self.status_extra()
        if self.ordering:
            extra.append(Text("\u00b7 waiting for the database to add new subjects ",
                              style="yellow"))
        if self._mine is None:
            self._mine = self.queue.mine()
        self.set_status(self.status_line(
            self.queue.tally(self._mine, total=total, done=self.DONE_WORD), *extra))

    # -------------------------------------------------------------- actions

    def answer(self) -> LabelPayload | None:
        """The suite's payload model built from the form; None (after saying what is missing)
        when the form is not complete."""
        raise NotImplementedError

    def saved_words(self, label: Annotation) -> str:
        return "saved"

    def action_submit(self) -> None:
        subject, queue = self.subject, self.queue
        if not self.has_current() or subject is None or queue is None:
            self.app.bell()
            return
        label = self.answer()
        if label is None:
            self.app.bell()
            return

        def landed(done: Annotation) -> None:
            self._saved(self.saved_words(done))
            self._count()

        # The label renews the lease in the same transaction (the label now owns the slot).
        if not self.write(f"label on #{self.pos(subject)}",
                          lambda _db: queue.submit(subject, label), landed, subject=subject):
            self.last_saved = None  # the status says what waits
        self._show(self.following())

    def action_undo(self) -> None:
        queue = self.queue
        if not self.ready or queue is None:
            self.app.bell()
            return
        self.write("undo of your last label", lambda _db: queue.undo(), self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify(f"Nothing to undo: you have no current {self.DONE_WORD[:-1]}.",
                        severity="warning")
            return
        # The undo renewed our lease on it in the same transaction.
        self._saved(f"undid your last {self.DONE_WORD[:-1]} (#{self.pos(undone.subject)})",
                    style="yellow")
        self._show(undone.subject, undone)
        self._count()

    def action_skip(self) -> None:
        subject, queue = self.subject, self.queue
        if not self.has_current() or subject is None or queue is None:
            self.app.bell()
            return
        # The skip gives the slot back in the same transaction.
        if not self.write(f"skip of #{self.pos(subject)}", lambda _db: queue.skip(subject),
                          lambda _id: self._saved("skipped", style="yellow"), subject=subject):
            self.last_saved = None
        self._show(self.following())

    def action_move(self, delta: int) -> None:
        if not self.ready or self.queue is None:
            self.app.bell()
            return
        target = self.neighbour(delta > 0)
        if target is None:
            self.notify(f"No earlier {self.SUBJECT_WORD}." if delta < 0 else
                        f"This is the last {self.SUBJECT_WORD}.", timeout=2)
            return
        self._show(target)

    def save_note(self, text: str | None) -> None:
        from copal_tui.domain.annotation.payloads import Remark

        if text and self.subject is not None:
            subject, queue = self.subject, self.queue
            assert queue is not None
            self.notes[subject] = text
            note = Remark(note=text)
            self.write(f"note on #{self.pos(subject)}", lambda _db: queue.remark(subject, note),
                       lambda _id: self._saved("note saved"))
            self.note_shown(text)
            self._status()

    def note_shown(self, text: str) -> None:
        """Show the note just written (the COPAL context shows the annotator's note)."""

    def save_flag(self, reason: str | None) -> None:
        from copal_tui.domain.annotation.payloads import Remark

        if reason and self.subject is not None:
            subject, queue = self.subject, self.queue
            assert queue is not None
            flag = Remark(flag=reason)
            self.write(f"flag on #{self.pos(subject)}", lambda _db: queue.remark(subject, flag),
                       lambda _id: self._saved(f"flagged: {reason}", style="yellow"))
            self._status()
