"""Adjudication of traffic pairs: the pairs whose annotators' current labels differ on the
policy category or on the error verdict (copal_tui.services.annotation.traffic), each with
every annotator's label side by side above the pair, and a decision built with the label
queue's keys (traffic_label.py: 0-2 the category, c/v the verdict, o the policies, f the
sensitive flag, e a note kept with the decision).

Enter decides; u undoes the adjudicator's last traffic decision; s skips; n/p (left/right)
move through every candidate, decided or not; `/` filters the candidates (id, source or
reason); q quits. A decision is an adjudicator's label in the annotation log with the suite's
payload, `TrafficLabel`; while a pair is on screen the adjudicator holds its lease; every write
goes through the app's line of writes (copal_tui.tui.busy), as in COPAL's adjudication
(copal_tui.services.annotation.adjudication with suite "traffic"). The automatic labeller's
predictions are not shown: the human reference is what they are measured against.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from copal_tui.services.annotation import adjudication as adj
from copal_tui.services.annotation import traffic
from copal_tui.services.annotation.views import Annotation, labels_of
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.adjudicate_moves import AdjudicationMoves
from copal_tui.tui.screens.traffic_label import TrafficFormScreen, label_words, pair_view
from copal_tui.tui.widgets.compass_view import heading

SUITE = "traffic"


def label_line(label: Annotation) -> Text:
    """One annotator's label on one line (its policies and note on the next, when given)."""
    out = safe(f"{one_line(label.annotator, 16):<16} ", style="bold")
    out.append(label_words(label))
    policies = ", ".join(label.get("policies") or [])
    if policies:
        out.append_text(safe(f"\n{'':16} policies {one_line(policies, 50)}", style="dim"))
    if label.get("note"):
        out.append_text(safe(f"\n{'':16} note: {one_line(label.get('note'), 50)}",
                             style="dim"))
    return out


class TrafficAdjudicateScreen(TrafficFormScreen, AdjudicationMoves):
    FILTER_ID = "traffic-filter"
    BINDINGS = [Binding("slash", "filter", "filter", show=False, id="adjudicate.filter"),
                Binding("ctrl+r", "refresh", "reload", show=False, id="adjudicate.refresh")]
    PALETTE_PREFIX = "Adjudicate traffic"
    NOTE_TITLE = "Note for your decision"
    FORM_HEADING = "Your decision"
    DEFAULT_CSS = """
    TrafficAdjudicateScreen #traffic-filter { height: 1; border: none; padding: 0 1;
                                              display: none; }
    TrafficAdjudicateScreen #traffic-filter.-shown { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.search = ""
        self.counts = adj.Counts()
        self.labels: list[Annotation] = []
        self.why: str | None = None
        self.decided: Annotation | None = None

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Input(placeholder="filter: id, source or reason; enter applies",
                    id="traffic-filter", compact=True)

    def on_mount(self) -> None:
        self.title = "copal \u00b7 adjudicate traffic"
        super().on_mount()
        self._show(self._next_pending(""))
        self._recount()

    @property
    def who(self) -> str:
        return str(self.copal.annotator)

    @property
    def pid(self) -> str | None:
        return None if self.pair is None else self.pair.id

    def has_current(self) -> bool:
        return self.pair is not None

    # -------------------------------------------------------------- candidates

    def _next_pending(self, after: str) -> str | None:
        return traffic.next_pending(self.copal.db, after, self.search, self.who, self.pending())

    def _show(self, pid: str | None, chosen: Annotation | None = None) -> None:
        db, who, minutes = self.copal.db, self.who, self.copal.settings.lease_minutes
        if self.pid is not None and self.pid != pid:
            self._release(self.pid)
        if pid is None or not self.read_pair(pid):
            self.labels, self.why, self.decided = [], None, None
            self.show_message("Nothing to adjudicate" + (
                f" matching {one_line(self.search, 30)!r}" if self.search else "") +
                ": no undecided pair whose annotators differ on category or error. p/n "
                "browse decided ones; / filters; q quits.")
            self.reset_reading()
            self._status()
            return
        self.write("lease", lambda db: adj.lease_adjudication(db, pid, who, minutes, SUITE),
                   self._held, keep=False, key=f"lease:{pid}")
        self.decided = adj.current_decision(db, pid, SUITE)
        self.labels = labels_of(db, SUITE, pid)
        self.why = traffic.reason(db, pid)
        assert self.pair is not None
        self.form.reset(chosen or self.decided, relabel=self.decided is not None,
                        linked=self.pair.world_id is not None)
        self.show_context()
        self.reset_reading()
        self._status()

    def context_view(self) -> RenderableType:
        parts: list[RenderableType] = [Text(f"Why here: {self.why or 'not a candidate'}",
                                            style="bold")]
        if self.decided is not None:
            line = safe(f"decided by {one_line(self.decided.annotator, 24)}: ", style="dim")
            line.append(label_words(self.decided), style="dim")
            parts.append(line)
        parts.append(heading("Annotators' labels"))
        parts += [label_line(lab) for lab in self.labels] or [Text("(none)", style="dim")]
        assert self.pair is not None
        return Group(*parts, *pair_view(self.pair, self.response))

    def _held(self, held: bool) -> None:
        if not held:
            self.notify("Another adjudicator has this pair open.", severity="warning")

    def _release(self, pid: str) -> None:
        who = self.who
        # A lease, not a decision: if the database stays busy it simply expires.
        self.write("release", lambda db: adj.release_adjudication(db, pid, who, SUITE),
                   keep=False)

    def _count(self, db: Any, search: str) -> adj.Counts:
        return traffic.counts(db, search)

    def _status(self) -> None:
        extra = [Text(f"\u00b7 filter {one_line(self.search, 30)!r} " if self.search
                      else "\u00b7 / filters ", style="dim")]
        self.set_status(self.status_line(
            f"{self.counts.decided}/{self.counts.total} decided", *extra))

    # -------------------------------------------------------------- actions

    def action_submit(self) -> None:
        pid, who = self.pid, self.who
        if pid is None:
            self.app.bell()
            return
        decision = self.built_label()
        if decision is None:
            self.app.bell()
            return

        def landed(done: Annotation) -> None:
            self._saved("decided " + label_words(done))
            self._recount()

        if not self.write("decision", lambda db: adj.decide(db, SUITE, pid, who, decision),
                          landed, subject=pid):
            self.last_saved = None  # the status says what waits
        self._show(self._next_pending(pid))

    def action_undo(self) -> None:
        who = self.who
        self.write("undo of your last decision",
                   lambda db: adj.undo_adjudication(db, who, SUITE), self._undone)

    def _undone(self, undone: Annotation | None) -> None:
        if undone is None:
            self.notify("Nothing to undo: you have no current traffic decision.",
                        severity="warning")
            return
        self._saved("undid your decision", style="yellow")
        self._show(undone.subject, undone)
        self._recount()

    @property
    def subject(self) -> str | None:
        return self.pid

    def _step(self, after: str, forward: bool) -> str | None:
        return traffic.step(self.copal.db, after, forward, self.search)

    def leave(self) -> None:
        if self.pid is not None:
            self._release(self.pid)
