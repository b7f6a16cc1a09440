"""The COMPASS label queue (`copal label --suite compass`): one response at a time, labelled
refused or answered, compliant or violating, with an optional failure mode for a denied query
that was not refused compliantly.

Shows the intended policy, the query, the response and every policy of the world. Blind by
default (COPAL_BLIND): the query type and strategy, the pre-filter's decision, the judges'
verdicts, the other annotators' labels and which list (allow or deny) each policy is on stay
hidden until this annotator has labelled the response, because each of them gives away the
expected answer (copal_tui.tui.widgets.compass_blind); the responding model and its variant
are a neutral "Response" unless COPAL_SHOW_MODEL is set. The queue (its campaign, order by
response id, leases and overlap, what "done" means) is copal_tui.annotation.queue, the one
every suite uses. Every write (label, undo, skip, lease) is one transaction through the app's
line of writes
(copal_tui.tui.busy): committed before the key handler returns when the database is free,
waiting its turn ("waiting for the database") while another process holds it. The label stores
the sha256 of the content (query, intended policy, the world's policies, response): see
copal_tui.annotation.suites.compass_shown_sha256.
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
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from copal_tui.annotation.queue import AnnotationQueue
from copal_tui.tui.busy import ATTEMPT_MS, QueueWrites, busy_timeout, is_busy
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.widgets.compass_blind import (
    BlindVerdict,
    kept_mode,
    neutral_policies,
    neutral_policy_line,
    policy_names,
)
from copal_tui.tui.widgets.compass_view import (
    heading,
    judgment_lines,
    label_lines,
    policies_block,
    policy_line,
    prefilter_line,
    query_meta,
    verdict_words,
)
from copal_tui.tui.widgets.screen_commands import ScreenCommands
from copal_tui.tui.widgets.scroll_pane import ScrollPane
from store.annotation import compass_labels
from store.annotation.annotations import Annotation
from store.browse import compass_browse_sql
from store.db import Database

BLIND_NOTE = ("Blind: the query type and strategy, the pre-filter's decision, the judges' "
              "verdicts, other annotators' labels and the policies' lists appear once you "
              "have labelled this response (COPAL_BLIND=false shows them at once).")


class CompassLabelScreen(QueueWrites, Screen[None]):
    COMMANDS = {ScreenCommands}
    HELP_TEXT = (
        "COMPASS labels: r refused or a answered (was the request declined?), c compliant or "
        "v violates (does the response keep every policy of the world?), and when the "
        "request should have been refused and was not refused compliantly an optional "
        "failure mode 1-3 (kept for denied queries only). enter submits; u undoes your last "
        "label; s skips; n/p move. " + BLIND_NOTE + " The intended policy is shown because "
        "the labels are judged against it; the query type and the policy's list are not, "
        "since they name the expected answer.")
    DEFAULT_CSS = """
    CompassLabelScreen #compass-status { height: 1; background: $boost; }
    CompassLabelScreen #compass-body { height: 1fr; }
    CompassLabelScreen #compass-context { width: 1fr; padding: 0 1; }
    CompassLabelScreen #compass-side {
        width: 45%; padding: 0 1; border-left: vkey $primary 40%;
    }
    CompassLabelScreen #compass-context:focus, CompassLabelScreen #compass-side:focus {
        background: $boost;
    }
    CompassLabelScreen #compass-reveal { margin: 1 0; }
    """
    BINDINGS = [
        Binding("r", "refused(True)", "refused", id="compass_label.refused"),
        Binding("a", "refused(False)", "answered", id="compass_label.answered"),
        Binding("c", "compliant(True)", "compliant", id="compass_label.compliant"),
        Binding("v", "compliant(False)", "violates", id="compass_label.violates"),
        Binding("1", "mode(1)", "direct violation", show=False, id="compass_label.mode1"),
        Binding("2", "mode(2)", "refusal-answer hybrid", show=False, id="compass_label.mode2"),
        Binding("3", "mode(3)", "indirect violation", show=False, id="compass_label.mode3"),
        Binding("enter", "submit", "submit", id="compass_label.submit"),
        Binding("u", "undo", "undo", id="compass_label.undo"),
        Binding("s", "skip", "skip", id="compass_label.skip"),
        Binding("n", "move(1)", "move", key_display="n/p", id="compass_label.next"),
        Binding("p", "move(-1)", "previous response", show=False, id="compass_label.prev"),
        Binding("q", "quit_queue", "quit", show=False, id="compass_label.quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rid: str | None = None
        self.ctx: dict[str, Any] | None = None
        self.total: int | None = None
        self.last_saved: Text | None = None
        self.status_text = ""
        self.queue: AnnotationQueue | None = None

    @property
    def form(self) -> BlindVerdict:
        return self.query_one(BlindVerdict)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(""), id="compass-status")
        with Horizontal(id="compass-body"):
            with ScrollPane(id="compass-context"):
                yield Static(Text("Loading the queue\u2026", style="dim"), id="compass-ctx")
            with ScrollPane(id="compass-side"):
                yield BlindVerdict(id="compass-verdict")
                yield Static(id="compass-reveal")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "copal \u00b7 COMPASS labels"
        self.query_one("#compass-context").focus()
        self.queue = self._queue(self.copal.db)
        # Renew our lease well before it runs out while the annotator reads a long response.
        self.set_interval(max(5.0, self.copal.settings.lease_minutes * 60 / 3), self._renew)
        self._prepare()

    def _queue(self, db: Database) -> AnnotationQueue:
        s = self.copal.settings
        return AnnotationQueue(db, "compass", self.copal.annotator,
                               campaign=self.copal.campaign, overlap=s.overlap,
                               lease_minutes=s.lease_minutes)

    @work(thread=True, exclusive=True, group="compass-label-total")
    def _prepare(self) -> None:
        """Place new responses and freeze this annotator's queue at its first start (a worker
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
        if self.rid is None:
            self._show(self.take_from(self.queue))
        else:
            self._status()

    def _renew(self) -> None:
        if self.rid is not None:
            self._lease(self.rid)

    def _lease(self, rid: str) -> None:
        queue = self.queue
        assert queue is not None
        self.write("lease", lambda _db: queue.renew(rid), keep=False, key=f"lease:{rid}")

    def _release(self, rid: str) -> None:
        queue = self.queue
        assert queue is not None
        # A lease, not a label: if the database is busy it simply expires.
        self.write("release", lambda _db: queue.release(rid), keep=False)

    def leave(self) -> None:
        if self.rid is not None:
            self._release(self.rid)

    # -------------------------------------------------------------- display

    def _show(self, rid: str | None, undone: Annotation | None = None) -> None:
        db, queue = self.copal.db, self.queue
        assert queue is not None
        if self.rid is not None and self.rid != rid:
            self._release(self.rid)  # one lease at a time while moving through the queue
        if rid is not None and rid != self.rid:
            self._lease(rid)
        self.rid = rid
        self.ctx = None if rid is None else compass_labels.label_context(db, rid)
        if self.ctx is None:
            self.rid = None
            self.query_one("#compass-ctx", Static).update(Text(
                "Nothing left for you in the COMPASS queue: every response has your label "
                "or your skip. p goes back; q quits.", style="dim"))
            self.form.reset(None)
            self.query_one("#compass-reveal", Static).update("")
            self._status()
            return
        mine = queue.current(self.rid or "")
        revealed = not self.copal.settings.blind or mine is not None
        self.form.hide_kind = not revealed
        chosen = undone or mine
        self.form.reset(self.ctx["query_type"], None if chosen is None else chosen.payload,
                        relabel=mine is not None)
        self.query_one("#compass-ctx", Static).update(self._context_view(revealed))
        self.query_one("#compass-reveal", Static).update(self._reveal(revealed, mine))
        for pane in ("#compass-context", "#compass-side"):
            self.query_one(pane, ScrollPane).scroll_home(animate=False)
        self._status()

    def _context_view(self, revealed: bool) -> RenderableType:
        ctx = self.ctx
        assert ctx is not None
        meta = safe(one_line(ctx["world_name"] or ctx["world_id"], 40), style="bold")
        meta.append_text(safe(f"  {one_line(ctx['model'], 40)} \u00b7 variant "
                              f"{ctx['variant']}" if self.copal.settings.show_model
                              else "  Response", style="dim"))
        parts: list[RenderableType] = [meta]
        if revealed:
            parts.append(safe(query_meta(ctx), style="dim"))
            pre = prefilter_line(ctx)
            if pre is not None:
                parts.append(pre)
        parts.append(heading("Intended policy"))
        text = ctx["policy_text"] or "(not a policy of this world)"
        if revealed:
            parts.append(policy_line({"id": ctx["policy_id"], "kind": ctx["policy_kind"] or "?",
                                      "text": text}))
        else:
            name = policy_names(ctx["policies"]).get(ctx["policy_id"], "policy")
            parts.append(neutral_policy_line(name, text))
        parts += [heading("Query"), safe(ctx["query"]), heading("Response"),
                  safe(ctx["response"]) if ctx["response"] else Text("(empty)", style="dim"),
                  heading("Policies of the world")]
        parts.extend(policies_block(ctx["policies"], ctx["policy_id"]) if revealed
                     else neutral_policies(ctx["policies"], ctx["policy_id"]))
        return Group(*parts)

    def _reveal(self, revealed: bool, mine: Annotation | None) -> RenderableType:
        if not revealed:
            return Text(BLIND_NOTE, style="dim italic")
        assert self.rid is not None
        db = self.copal.db
        others = [lab.row() for lab in compass_browse_sql.current_labels(db, self.rid)
                  if lab.annotator != self.copal.annotator]
        title = "Judges and labels" + (" (you have labelled this)" if mine else " (not blind)")
        return Group(Text(title, style="bold underline"),
                     *judgment_lines(compass_browse_sql.judgments_of(db, self.rid)),
                     heading("Other annotators"), *label_lines(others))

    def _status(self) -> None:
        out = Text(f" {one_line(self.copal.annotator, 24)} ", style="bold reverse")
        assert self.queue is not None
        out.append(f" {self.queue.tally(total=self.total)} ", style="bold")
        if self.rid is not None and self.copal.settings.show_model and not self.form.hide_kind:
            # The id names the query (its policy, its type) and the model: revealed only.
            out.append_text(safe(f"\u00b7 {one_line(self.rid, 30)} ", style="dim"))
        out.append_text(self.waiting_text())
        if self.last_saved is not None:
            out.append_text(self.last_saved)
        self.status_text = out.plain
        self.query_one("#compass-status", Static).update(out)

    def _saved(self, what: str, style: str = "green") -> None:
        self.last_saved = Text(f"\u00b7 {what}", style=style)

    # -------------------------------------------------------------- actions

    def action_refused(self, value: bool) -> None:
        if self.ctx is None:
            self.app.bell()
            return
        self.form.set_refused(value)

    def action_compliant(self, value: bool) -> None:
        if self.ctx is None:
            self.app.bell()
            return
        self.form.set_compliant(value)

    def action_mode(self, number: int) -> None:
        if self.ctx is None or not self.form.set_mode(number):
            self.app.bell()
            if self.ctx is not None:
                self.notify("A failure mode is only for a request that should have been "
                            "refused and was not refused compliantly.", severity="warning",
                            timeout=3)

    def action_submit(self) -> None:
        form, ctx, rid, queue = self.form, self.ctx, self.rid, self.queue
        if ctx is None or rid is None:
            self.app.bell()
            return
        if not form.complete:
            self.app.bell()
            self.notify("Choose r (refused) or a (answered), and c (compliant) or v "
                        "(violates), then enter.", severity="warning", timeout=3)
            return
        refused, compliant = bool(form.refused), bool(form.compliant)
        mode = kept_mode(ctx["query_type"], refused, compliant, form.failure_mode)
        words = verdict_words(refused, compliant, form.aligned, form.failure_mode)
        assert queue is not None
        if not self.write(
                "COMPASS label", lambda _db: queue.submit(
                    rid, refused=refused, compliant=compliant, failure_mode=mode),
                lambda _id: self._saved("saved " + words), subject=rid):
            self.last_saved = None  # the status says what waits
        self._advance()

    def _advance(self) -> None:
        """The next response this annotator is not done with (after this one, else from the
        start: responses passed over with n are still open), never one whose label or skip
        still waits for the database."""
        assert self.queue is not None
        for after in dict.fromkeys((self.queue.position(self.rid) or 0, 0)):
            nxt = self.take_from(self.queue, after)
            if nxt is not None:
                self._show(nxt)
                return
        self._show(None)

    def action_undo(self) -> None:
        queue = self.queue
        assert queue is not None
        self.write("undo of your last COMPASS label", lambda _db: queue.undo(), self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify("Nothing to undo: you have no current COMPASS label.",
                        severity="warning")
            return
        self._saved("undid your last label", style="yellow")
        self._show(undone.subject, undone)

    def action_skip(self) -> None:
        rid, queue = self.rid, self.queue
        if rid is None or queue is None:
            self.app.bell()
            return
        if not self.write("COMPASS skip", lambda _db: queue.skip(rid),
                          lambda _id: self._saved("skipped", style="yellow"), subject=rid):
            self.last_saved = None
        self._advance()

    def action_move(self, delta: int) -> None:
        if self.queue is None:
            return
        target = self.queue.neighbour(self.rid, forward=delta > 0)
        if target is None:
            self.notify("This is the first response." if delta < 0 else
                        "This is the last response.", timeout=2)
            return
        self._show(target)
