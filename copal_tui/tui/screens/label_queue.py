"""The blind COPAL label queue (`copal label`): one response at a time, marked item by item.

Shows the query, the response, the active clauses and the numbered contract items; the derived
error and direction update as items are toggled; progress n/N stays on the status line. Blind by
default: the judge's marks, other annotators' labels and the item's target facet appear only on
a response this annotator has already labelled (or everywhere with COPAL_BLIND=false); the
responding model is a neutral "Response" unless COPAL_SHOW_MODEL is set. The annotator's own
latest note on a response is shown again whenever they come back to it.

On an erroneous response `o` names the observed facet (copal_tui.tui.screens.label_facet); it is
stored with the label, and only while the marks give an error.

The keys, layout and lifecycle are the labelling base's (label_base.py, label_lifecycle.py);
what is COPAL's here: the contract marks, `c` correct, the facet, and moving along the
annotator's own trail with n/p (the responses they labelled), so going back never lands on
someone else's slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding

from copal_tui.services.annotation.views import (
    Annotation,
    ResponseContext,
    copal_context,
    copal_reveal,
    latest_note,
)
from copal_tui.tui.safe import SHOWN
from copal_tui.tui.screens.label_lifecycle import QueueLabelScreen
from copal_tui.tui.screens.marking import MARK_BINDINGS, Marking, remark_rows, reveal_columns
from copal_tui.tui.widgets.contract_marks import DIRECTION_WORDS, contract_items

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import CopalLabel


class LabelQueueScreen(Marking, QueueLabelScreen):
    BINDINGS = [*MARK_BINDINGS,
                Binding("o", "facet", "observed facet", show=False, id="label.facet"),
                Binding("ctrl+r", "refresh", "reload", show=False, id="label.refresh")]
    PALETTE_PREFIX = "Label"
    SUITE = "copal"
    SUITE_KEYS = ("label.", "COPAL: mark the contract")
    EMPTY = ("Nothing left for you in the queue: every response has its labels or is being "
             "labelled. p goes back to your labels; q quits.")
    NOTHING = ("No responses to label yet: `copal run respond --model MODEL` answers the "
               "selected items (`copal import PATH` adds worlds; `copal demo` builds an example "
               "store). q quits.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ctx: ResponseContext | None = None

    @property
    def rid(self) -> str | None:
        return self.subject

    def on_mount(self) -> None:
        super().on_mount()
        self.marks.with_facet = True

    # -------------------------------------------------------------- moving along our trail

    def following(self) -> str | None:
        """After a label: the next response on our trail (when relabelling an earlier one),
        else the next one open to us."""
        assert self.queue is not None
        nxt, skip = self.subject, self.pending()
        while nxt is not None:
            nxt = self.queue.step(nxt, forward=True)
            if nxt not in skip:
                break
        # Else (the response just labelled is done) where we left off, else a new slot.
        return nxt if nxt is not None else self._first()

    def neighbour(self, forward: bool) -> str | None:
        assert self.queue is not None
        if self.subject is None:
            # Past the end of the queue: back goes to our latest label.
            return self.queue.step_last() if not forward else None
        target = self.queue.step(self.subject, forward=forward)
        if target is None and forward:
            # Past our newest label: the response we are working on (or a new one).
            nxt = self._first()
            target = None if nxt == self.subject else nxt
        return target

    # -------------------------------------------------------------- display

    def load(self, subject: str) -> bool:
        self.ctx = copal_context(self.copal.db, subject, SHOWN)  # the first part of a long one
        return self.ctx is not None

    def render_empty(self, message: str) -> None:
        self.ctx = None
        self.context_pane.show(None, message)
        self.marks.clear("")
        self.matrix.hide("")

    def render_subject(self, mine: Annotation | None, undone: Annotation | None) -> None:
        assert self.ctx is not None and self.subject is not None
        chosen = undone or mine
        marks = list(chosen.get("observed") or []) if chosen else []
        facet = chosen.get("facet") if chosen else None
        items = contract_items(self.ctx.required, self.ctx.forbidden)
        self._show_context(revealed=self._revealed(mine))
        self.marks.set_contract(items, marks, facet=facet, title=(
            "Contract (your label: relabel with enter)" if mine else "Contract"))
        self._reveal(mine is not None)

    def _revealed(self, mine: Annotation | None) -> bool:
        return mine is not None or not self.copal.settings.blind

    def _show_context(self, revealed: bool) -> None:
        assert self.subject is not None
        note = self.notes.get(self.subject) or latest_note(
            self.copal.db, "copal", self.subject, self.copal.annotator)
        self.context_pane.show(self.ctx, show_model=self.copal.settings.show_model, note=note,
                               show_facet=revealed)

    def note_shown(self, text: str) -> None:
        assert self.queue is not None and self.subject is not None
        self._show_context(self._revealed(self.queue.current(self.subject)))

    def _reveal(self, labelled: bool) -> None:
        if self.ctx is None or self.subject is None:
            return
        if self.copal.settings.blind and not labelled:
            self.matrix.hide("Blind: the judge's marks and other labels appear once you "
                             "have submitted your own.")
            return
        seen = copal_reveal(self.copal.db, self.subject)
        items = contract_items(self.ctx.required, self.ctx.forbidden)
        self.matrix.show(items, reveal_columns(seen),
                         title="Labels and judges (you have labelled this)"
                         if labelled else "Labels and judges (not blind)",
                         notes=remark_rows(seen.remarks))

    def status_extra(self) -> list[Text]:
        p = self.progress
        assert self.queue is not None
        out = [Text(f"\u00b7 slots {p.filled}/{p.slots} (overlap {self.queue.overlap}) ",
                    style="dim")]
        if self.subject is not None:
            out.append(Text(f"\u00b7 #{self.pos(self.subject)} ", style="dim"))
        return out

    # -------------------------------------------------------------- actions

    def answer(self) -> CopalLabel | None:
        from copal_tui.domain.annotation.payloads import CopalLabel

        if self.ctx is None:
            return None
        # The rule the marks pane shows its verdict by, on the contract it shows.
        return CopalLabel.from_marks(self.ctx.required, self.ctx.forbidden, self.marks.observed,
                                     facet=self.marks.kept_facet)

    def saved_words(self, label: Annotation) -> str:
        error, direction = label.get("error"), label.get("direction")
        if not error:
            return "saved e=0 correct"
        facet = label.get("facet")
        return f"saved e={error} {DIRECTION_WORDS[direction]}" + (f" \u00b7 {facet}"
                                                                    if facet else "")

    def action_correct(self) -> None:
        if not self.has_current() or self.ctx is None:
            self.app.bell()
            return
        self.marks.set_observed([c["id"] for c in self.ctx.required])
        self.action_submit()

    def action_facet(self) -> None:
        if not self.has_current() or self.ctx is None:
            self.app.bell()
            return
        if not self.marks.verdict.error:
            self.app.bell()
            self.notify("A facet names how a response fails: these marks say it is correct.",
                        severity="warning", timeout=3)
            return
        from copal_tui.tui.screens.label_facet import FacetScreen

        self.app.push_screen(FacetScreen(self.ctx.pattern, self.marks.facet), self._faceted)

    def _faceted(self, facet: str | None) -> None:
        if facet is not None:  # "" is "none"
            self.marks.set_facet(facet or None)

    def action_refresh(self) -> None:
        self._show(self.subject)
        self._count()
