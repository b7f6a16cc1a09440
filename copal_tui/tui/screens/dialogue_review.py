"""The judge-mistake review queue (`copal label --suite dialogues [--judge J]`): one wrong
prediction at a time (a compliant turn given the wrong guideline, a false alarm or no
prediction; a violation turn not flagged), with the conversation up to that turn, the truth
and the judge's prediction; the reviewer names the error type (keys 1-6, the taxonomy of
copal_tui.domain.dialogue), optionally with a note.

Not blind: the truth and the prediction are the point. The queue (its campaign, order by
dialogue, judge, attempt and turn, leases and overlap, done = labelled or skipped and not
undone) is copal_tui.annotation.queue, the one every suite uses, so it resumes at the
reviewer's first open mistake. Every write (label, undo, skip, lease) is one transaction
through the app's line of writes (copal_tui.tui.busy):
committed before the key handler returns when the database is free, waiting its turn ("waiting
for the database") while another process holds it; undo appends an event.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from copal_tui.annotation.queue import AnnotationQueue
from copal_tui.domain.dialogue import ERROR_TYPES
from copal_tui.tui.busy import ATTEMPT_MS, QueueWrites, busy_timeout, is_busy
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.screens.label_note import NoteScreen
from copal_tui.tui.widgets.dialogue_error_types import (
    LINES,
    TYPES,
    ErrorTypePicker,
    type_name,
)
from copal_tui.tui.widgets.dialogue_view import (
    KIND_WORDS,
    guideline_label,
    heading,
    prediction_lines,
    truth_lines,
    turn_header,
)
from copal_tui.tui.widgets.screen_commands import ScreenCommands
from copal_tui.tui.widgets.scroll_pane import ScrollPane
from store.annotation import dialogue_reviews
from store.annotation.annotations import Annotation
from store.annotation.dialogue_reviews import ReviewKey, key_of, subject_of
from store.artifacts import dialogue_sql
from store.db import Database


def turn_view(turn: dict[str, Any], current: bool) -> Text:
    """One turn of the conversation; an earlier assistant turn with its truth, since errors
    like "ignored key evidence" hinge on what earlier turns established."""
    out = turn_header(turn, current)
    out.append("\n")
    out.append_text(safe(turn["content"], style="bold" if current else ""))
    out.append("\n")
    if turn["role"] == "assistant" and not current:
        out.append("  truth ", style="dim")
        out.append_text(guideline_label(turn["category"], turn["key"], turn["phase"]))
        out.append(" \u00b7 VIOLATION\n" if turn["violation"] else " \u00b7 compliant\n",
                   style="bold" if turn["violation"] else "dim")
    return out


class DialogueReviewScreen(QueueWrites, Screen[None]):
    COMMANDS = {ScreenCommands}
    HELP_TEXT = (
        "Judge mistakes: each item is a turn where a judge attempt's prediction is wrong by the "
        "metrics' rules (a compliant turn given the wrong guideline, flagged as a violation or "
        "left without a prediction; a violation turn not flagged). Name the cause with 1-6, "
        "then enter; e adds a note; u undoes your last review (an undo event is appended); s "
        "skips; n/p move; d shows the guideline document. The error types:\n"
        + "\n".join(f"  {n} {text}" for n, text in enumerate(ERROR_TYPES.values(), 1)))
    DEFAULT_CSS = """
    DialogueReviewScreen #review-status { height: 1; background: $boost; }
    DialogueReviewScreen #review-body { height: 1fr; }
    DialogueReviewScreen #review-context { width: 1fr; padding: 0 1; }
    DialogueReviewScreen #review-side {
        width: 48%; padding: 0 1; border-left: vkey $primary 40%;
    }
    DialogueReviewScreen #review-facts-pane { height: 1fr; }
    DialogueReviewScreen #review-context:focus, DialogueReviewScreen #review-facts-pane:focus {
        background: $boost;
    }
    DialogueReviewScreen #review-picker { border-top: solid $primary 40%; }
    """
    BINDINGS = [
        *[Binding(str(n), f"choose({n})", type_name(key), show=False,
                  id=f"dialogue_review.type{n}") for n, key in enumerate(TYPES, 1)],
        Binding("enter", "submit", "submit", id="dialogue_review.submit"),
        Binding("e", "note", "note", id="dialogue_review.note"),
        Binding("u", "undo", "undo", id="dialogue_review.undo"),
        Binding("s", "skip", "skip", id="dialogue_review.skip"),
        Binding("n", "move(1)", "move", key_display="n/p", id="dialogue_review.next"),
        Binding("p", "move(-1)", "previous mistake", show=False, id="dialogue_review.prev"),
        Binding("d", "document", "document", id="dialogue_review.document"),
        Binding("q", "quit_queue", "quit", show=False, id="dialogue_review.quit"),
    ]

    def __init__(self, judge: str | None = None) -> None:
        super().__init__()
        self.judge = judge
        self.key: ReviewKey | None = None
        self.row: dict[str, Any] | None = None
        self.dialogue: dict[str, Any] | None = None
        self.total: int | None = None
        self.last_saved: Text | None = None
        self.status_text = ""
        self.queue: AnnotationQueue | None = None

    @property
    def picker(self) -> ErrorTypePicker:
        return self.query_one(ErrorTypePicker)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(""), id="review-status")
        with Horizontal(id="review-body"):
            with ScrollPane(id="review-context"):
                yield Static(Text("Loading the queue\u2026", style="dim"), id="review-ctx")
            with Vertical(id="review-side"):
                with ScrollPane(id="review-facts-pane"):
                    yield Static(id="review-facts")
                # Outside the scrolling facts, so the choice is always in view.
                yield ErrorTypePicker(id="review-picker")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "copal \u00b7 judge mistakes" + (
            f" of {one_line(self.judge, 40)}" if self.judge else "")
        self.query_one("#review-context").focus()
        self.picker.styles.height = LINES + 1  # its fixed lines and the border
        self.queue = self._queue(self.copal.db)
        # Renew our lease well before it runs out while the reviewer reads a long dialogue.
        self.set_interval(max(5.0, self.copal.settings.lease_minutes * 60 / 3), self._renew)
        self._prepare()

    def _queue(self, db: Database) -> AnnotationQueue:
        s = self.copal.settings
        return AnnotationQueue(db, "dialogues", self.copal.annotator,
                               campaign=self.copal.campaign, judge=self.judge,
                               overlap=s.overlap, lease_minutes=s.lease_minutes)

    @work(thread=True, exclusive=True, group="dialogue-review-total")
    def _prepare(self) -> None:
        """Place new mistakes and freeze this reviewer's queue at its first start (a worker
        with its own connection); retried while another process holds the database."""
        with self.copal.worker_db() as db:
            queue = self._queue(db)
            try:
                with busy_timeout(db, ATTEMPT_MS):
                    queue.prepare(refresh=self.copal.refresh_queue)
                ready = True
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                ready = False
            total = queue.progress().total
        with suppress(RuntimeError):  # the app closed while the worker ran
            self.app.call_from_thread(self._prepared, total, ready)

    def _prepared(self, total: int, ready: bool) -> None:
        assert self.queue is not None
        self.queue.reload()
        if ready:
            self.copal.refresh_queue = False
        else:
            self.set_timer(5.0, self._prepare)
        self.total = total
        if self.key is None:
            self._show(self._take(0))
        else:
            self._status()

    def _take(self, after: int) -> ReviewKey | None:
        assert self.queue is not None
        subject = self.take_from(self.queue, after)
        return None if subject is None else key_of(subject)

    def _renew(self) -> None:
        if self.key is not None:
            self._lease(self.key)

    def _lease(self, key: ReviewKey) -> None:
        queue, subject = self.queue, subject_of(key)
        assert queue is not None
        self.write("lease", lambda _db: queue.renew(subject), keep=False, key=f"lease:{subject}")

    def _release(self, key: ReviewKey) -> None:
        queue, subject = self.queue, subject_of(key)
        assert queue is not None
        # A lease, not a review: if the database is busy it simply expires.
        self.write("release", lambda _db: queue.release(subject), keep=False)

    def leave(self) -> None:
        if self.key is not None:
            self._release(self.key)

    # -------------------------------------------------------------- display

    def _show(self, key: ReviewKey | None, undone: Annotation | None = None) -> None:
        db, queue = self.copal.db, self.queue
        assert queue is not None
        if self.key is not None and self.key != key:
            self._release(self.key)  # one lease at a time while moving through the queue
        if key is not None and key != self.key:
            self._lease(key)
        self.key = key
        self.row = None if key is None else dialogue_reviews.mistake(db, key)
        if self.dialogue is None or key is None or self.dialogue["id"] != key.dialogue_id:
            self.dialogue = None if key is None else dialogue_sql.dialogue(db, key.dialogue_id)
        if self.row is None or self.dialogue is None:
            self.key = None
            self.query_one("#review-ctx", Static).update(Text(
                "Nothing left for you in the queue: every judge mistake has your review or "
                "your skip. p goes back; q quits.", style="dim"))
            self.query_one("#review-facts", Static).update("")
            self.picker.reset(None)
            self._status()
            return
        mine = queue.current(subject_of(self.row_key))
        chosen = undone or mine
        self.picker.reset(None if chosen is None else chosen.payload, relabel=mine is not None)
        self.query_one("#review-ctx", Static).update(self._conversation())
        self.query_one("#review-facts", Static).update(self._facts())
        self.query_one("#review-facts-pane", ScrollPane).scroll_home(animate=False)
        # The turn under review ends the conversation shown: start at the bottom.
        self.call_after_refresh(
            self.query_one("#review-context", ScrollPane).scroll_end, animate=False)
        self._status()

    @property
    def row_key(self) -> ReviewKey:
        assert self.key is not None
        return self.key

    def _conversation(self) -> Text:
        """The dialogue up to the turn under review, as one Text (one Rich render; a Group of
        a Text per line costs Textual noticeably more on every move)."""
        assert self.dialogue is not None and self.key is not None
        out = safe(one_line(self.dialogue["id"], 60), style="bold")
        out.append_text(safe(f"  \u00b7  {one_line(self.dialogue['domain'], 30)}\n",
                             style="dim"))
        for turn in self.dialogue["turns"]:
            if turn["turn_index"] > self.key.turn_index:
                break
            out.append("\n")
            out.append_text(turn_view(turn, turn["turn_index"] == self.key.turn_index))
        return out

    def _facts(self) -> RenderableType:
        row, key = self.row, self.key
        assert row is not None and key is not None and self.dialogue is not None
        guidelines = self.dialogue["guidelines"]
        turn = {"category": row["category"], "key": row["key"], "phase": row["phase"],
                "violation": row["violation"], "guideline_text": row["guideline_text"],
                "evidence": row["evidence"]}
        pred = None if not row["predicted"] else {
            "category": row["p_category"], "key": row["p_key"], "phase": row["p_phase"],
            "violation": row["p_violation"], "reason": row["p_reason"]}
        mark = Text(KIND_WORDS.get(row["kind"], row["kind"]), style="bold reverse")
        return Group(mark, Text(""), *truth_lines(turn, guidelines, show_text=True), Text(""),
                     heading("Judge's prediction"),
                     *prediction_lines(pred, row["kind"], f"{key.judge} #{key.attempt}",
                                       guidelines, show_text=True, mark=False,
                                       binary=bool(row["binary_judge"]), truth=turn))

    def _status(self) -> None:
        out = Text(f" {one_line(self.copal.annotator, 24)} ", style="bold reverse")
        assert self.queue is not None
        out.append(f" {self.queue.tally(total=self.total, done='reviewed')} ", style="bold")
        if self.key is not None:
            out.append_text(safe(f"\u00b7 {one_line(self.key.judge, 24)} #{self.key.attempt} "
                                 f"\u00b7 {one_line(self.key.dialogue_id, 40)} turn "
                                 f"{self.key.turn_index} ", style="dim"))
        out.append_text(self.waiting_text())
        if self.last_saved is not None:
            out.append_text(self.last_saved)
        self.status_text = out.plain
        self.query_one("#review-status", Static).update(out, layout=False)  # one line, always

    def _saved(self, what: str, style: str = "green") -> None:
        self.last_saved = Text(f"\u00b7 {what}", style=style)

    # -------------------------------------------------------------- actions

    def action_choose(self, number: int) -> None:
        if self.key is None or not self.picker.choose(number):
            self.app.bell()

    def action_note(self) -> None:
        if self.key is None:
            self.app.bell()
            return
        self.app.push_screen(NoteScreen("Note on this judge mistake"), self._noted)

    def _noted(self, note: str | None) -> None:
        if note is not None:
            self.picker.set_note(note)

    def action_submit(self) -> None:
        key, queue, note = self.key, self.queue, self.picker.note
        if key is None or queue is None:
            self.app.bell()
            return
        error_type = self.picker.error_type
        if error_type is None:
            self.app.bell()
            self.notify("Choose the error type with 1-6, then enter.", severity="warning",
                        timeout=3)
            return
        subject = subject_of(key)
        if not self.write("review", lambda _db: queue.submit(subject, error_type=error_type,
                                                            note=note),
                          lambda _id: self._saved(f"saved {type_name(error_type)}"),
                          subject=subject):
            self.last_saved = None  # the status says what waits
        self._advance()

    def _advance(self) -> None:
        """The next mistake this reviewer is not done with (after this one, else from the
        start: mistakes passed over with n are still open), never one whose review or skip
        still waits for the database."""
        assert self.queue is not None
        here = None if self.key is None else self.queue.position(subject_of(self.key))
        for after in dict.fromkeys((here or 0, 0)):
            nxt = self._take(after)
            if nxt is not None:
                self._show(nxt)
                return
        self._show(None)

    def action_undo(self) -> None:
        queue = self.queue
        assert queue is not None
        self.write("undo of your last review", lambda _db: queue.undo(), self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify("Nothing to undo: you have no current review.", severity="warning")
            return
        self._saved("undid your last review", style="yellow")
        self._show(key_of(undone.subject), undone)

    def action_skip(self) -> None:
        key, queue = self.key, self.queue
        if key is None or queue is None:
            self.app.bell()
            return
        subject = subject_of(key)
        if not self.write("skip", lambda _db: queue.skip(subject),
                          lambda _id: self._saved("skipped", style="yellow"), subject=subject):
            self.last_saved = None
        self._advance()

    def action_move(self, delta: int) -> None:
        if self.queue is None:
            return
        found = self.queue.neighbour(None if self.key is None else subject_of(self.key),
                                     delta > 0)
        target = None if found is None else key_of(found)
        if target is None:
            self.notify("This is the first mistake." if delta < 0 else
                        "This is the last mistake.", timeout=2)
            return
        self._show(target)

    def action_document(self) -> None:
        if self.dialogue is None or self.row is None:
            self.app.bell()
            return
        self.app.push_screen(DialogueDocumentScreen(
            self.dialogue, (self.row["category"], self.row["key"], self.row["phase"])))
