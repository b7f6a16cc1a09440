"""The traffic label queue (`copal label --suite traffic`): one de-identified pair of a deployed
chatbot's log at a time (its earlier turns, for a transcript, then the query and the response),
labelled with its policy category and whether the response is erroneous, optionally the linked
world's policies that apply, the residual-sensitive flag and a note.

Blind: the screen reads the pair and this annotator's own label only, never another annotator's
label nor the automatic labeller's prediction. The texts were de-identified on import (typed
placeholders such as <EMAIL_1>) and are shown through copal_tui.tui.safe like every stored
text; a long response is read a part at a time (`>`/`<`).

Keys: 0/1/2 the category (how many policies the request engages: none, single, multi); c or v
the response correct or erroneous (COMPASS's compliant/violates keys); o the policy picker (only
when the pair's import is linked to a world); f flags the pair as still holding sensitive
content (the queue's flag key: in this suite the flag is the label's own field, and a flagged
pair leaves the figures); e a note (kept with the label). The common keys (enter, u, s, n/p, q,
scrolling) and the lifecycle (queue, leases, writes that wait out a busy database) are the
labelling base's (label_base.py, label_lifecycle.py).

`TrafficFormScreen` holds what the adjudication screen (traffic_adjudicate.py) shares: the
keys, the form's actions and how a pair is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from copal_tui.services.annotation.views import (
    Annotation,
    PairRow,
    PolicyRow,
    traffic_pair,
    world_policies,
)
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.label_base import LabelScreen
from copal_tui.tui.screens.label_lifecycle import QueueLabelScreen
from copal_tui.tui.widgets.compass_view import heading
from copal_tui.tui.widgets.long_text import LongText
from copal_tui.tui.widgets.scroll_pane import ScrollPane
from copal_tui.tui.widgets.traffic_form import CATEGORY_KEYS, TrafficForm

if TYPE_CHECKING:
    from copal_tui.domain.traffic import TrafficLabel

HELP_TEXT = (
    "Traffic labels: 0, 1 or 2 give the policy category (how many of the organisation's "
    "policies the request engages: none, a single one, or several that must be honoured in one "
    "answer); c or v say whether the response is correct or erroneous (wrong information, a "
    "restriction broken, something allowed refused, a required step missed); o picks which of "
    "the linked world's policies apply (optional; a single-policy pair names at most one); f "
    "flags the pair as still holding sensitive content after de-identification (it then leaves "
    "the figures, and category and verdict become optional); e writes a note kept with the "
    "label. Blind: no other annotator's label and no automatic prediction is ever shown.")


def pair_view(pair: PairRow, response: LongText) -> list[RenderableType]:
    """A pair as the annotator reads it: where it comes from, its earlier turns, the query and
    the response (the part on screen)."""
    meta = f"source {pair.source} \u00b7 line {pair.line}"
    if pair.turn is not None:
        meta += f" \u00b7 turn {pair.turn}"
    parts: list[RenderableType] = [safe(one_line(meta, 70), style="dim")]
    if pair.context:
        parts.append(heading("Earlier turns"))
        for role, content in pair.context:
            line = safe(f"{one_line(role, 12)}: ", style="bold")
            line.append_text(safe(content))
            parts.append(line)
    parts += [heading("Query"), safe(pair.query or "(empty)"), heading("Response"),
              *response.renderables()]
    return parts


class TrafficFormScreen(LabelScreen):
    """A screen with a pair on the left and a `TrafficForm` on the right: the suite's keys and
    what they do (the label queue and adjudication both are one)."""

    HELP_TEXT = HELP_TEXT
    # Not in the footer (the form names them); `?` and the palette list them. One id per key
    # in both screens, so one COPAL_KEYMAP entry remaps it in the queue and in adjudication.
    BINDINGS = [
        *[Binding(key, f"category('{category}')", f"{category} policy category", show=False,
                  id=f"traffic_label.{category}") for key, category in CATEGORY_KEYS.items()],
        Binding("c", "erroneous(False)", "correct", show=False, id="traffic_label.correct"),
        Binding("v", "erroneous(True)", "erroneous", show=False, id="traffic_label.erroneous"),
        Binding("o", "policies", "policies that apply", show=False,
                id="traffic_label.policies"),
    ]
    PALETTE_PREFIX = "Traffic"
    SUITE_KEYS = ("traffic_label.", "Traffic: the label")
    READING_PANE = "#traffic-context"
    NOTE_TITLE = "Note on this pair"
    FORM_HEADING = "Your label"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pair: PairRow | None = None
        self.response = LongText(None)  # the part on screen (widgets/long_text.py)
        self.form = TrafficForm(self.FORM_HEADING, id="traffic-form")
        self._policies: dict[str, list[PolicyRow]] = {}  # by world, read when first picked

    def compose_panes(self) -> ComposeResult:
        with ScrollPane(id="traffic-context", classes="label-read"):
            yield Static(Text("Loading\u2026", style="dim"), id="traffic-ctx")
        with ScrollPane(id="traffic-side", classes="label-side"):
            yield self.form

    def read_pair(self, pair_id: str) -> bool:
        """Read the pair to show (False when it is gone or its text was purged)."""
        found = traffic_pair(self.copal.db, pair_id)
        if found is None or found.purged_at is not None:
            self.pair = None
            return False
        self.pair = found
        self.response = LongText.of(found.response)
        return True

    def context_view(self) -> RenderableType:
        assert self.pair is not None
        return Group(*pair_view(self.pair, self.response))

    def show_context(self) -> None:
        self.query_one("#traffic-ctx", Static).update(self.context_view())

    def show_message(self, message: str) -> None:
        self.pair = None
        self.query_one("#traffic-ctx", Static).update(Text(message, style="dim"))
        self.form.clear()

    def move_part(self, delta: int) -> bool:
        if self.pair is None or not self.response.move(delta):
            return False
        self.show_context()
        return True

    # -------------------------------------------------------------- the form's keys

    def _ready(self) -> bool:
        if self.pair is None:
            self.app.bell()
            return False
        return True

    def action_category(self, category: str) -> None:
        if self._ready():
            self.form.set_category(category)

    def action_erroneous(self, value: bool) -> None:
        if self._ready():
            self.form.set_erroneous(value)

    def action_flag(self) -> None:
        if self._ready():
            self.form.toggle_sensitive()

    def save_note(self, text: str | None) -> None:
        # The note goes with the label (its payload), not as an event of its own.
        if text is not None and self.pair is not None:
            self.form.set_note(text)

    def action_policies(self) -> None:
        if not self._ready():
            return
        assert self.pair is not None
        world = self.pair.world_id
        if world is None:
            self.notify("This pair's log is linked to no world: there are no policies to name.",
                        severity="warning", timeout=3)
            return
        if world not in self._policies:
            self._policies[world] = world_policies(self.copal.db, world)
        from copal_tui.tui.screens.traffic_policies import TrafficPoliciesScreen

        self.app.push_screen(TrafficPoliciesScreen(self._policies[world], self.form.policies),
                             self._picked)

    def _picked(self, chosen: list[str] | None) -> None:
        if chosen is not None and self.pair is not None:
            self.form.set_policies(chosen)

    def built_label(self) -> TrafficLabel | None:
        """The form as the suite's payload model; None (after saying why) when incomplete or
        inconsistent (the model's own rules: a single-policy pair names one policy at most)."""
        from copal_tui.domain.traffic import TrafficLabel

        form = self.form
        if not form.complete:
            self.notify("Choose the category with 0-2 and c (correct) or v (erroneous), or "
                        "flag the pair with f; then enter.", severity="warning", timeout=3)
            return None
        try:
            return TrafficLabel(category=form.category, erroneous=form.erroneous,
                                policies=form.policies or None, sensitive=form.sensitive,
                                note=form.note)
        except ValueError as exc:  # pydantic's ValidationError: the model's rule, in words
            errors = getattr(exc, "errors", None)
            why = str(errors()[0]["msg"]) if callable(errors) else str(exc)
            self.notify(why.removeprefix("Value error, "), severity="warning", timeout=4)
            return None


def label_words(label: Annotation) -> str:
    """A stored label in a few words, for the status line."""
    if label.get("sensitive") and label.get("category") is None:
        return "flagged sensitive"
    verdict = "erroneous" if label.get("erroneous") else "correct"
    out = f"{label.get('category')} \u00b7 {verdict}"
    return out + (" \u00b7 flagged sensitive" if label.get("sensitive") else "")


class TrafficLabelScreen(TrafficFormScreen, QueueLabelScreen):
    SUITE = "traffic"
    SUBJECT_WORD = "pair"
    EMPTY = ("Nothing left for you in the traffic queue: every pair has your label or your "
             "skip, or is being labelled. p goes back; q quits.")
    NOTHING = ("No traffic pairs to label yet: `copal traffic import LOG --source NAME` stores "
               "a chatbot's log, `copal campaign create NAME --suite traffic --size 200` draws "
               "a sample. q quits.")

    def on_mount(self) -> None:
        self.title = "copal \u00b7 traffic labels"
        super().on_mount()

    def load(self, subject: str) -> bool:
        return self.read_pair(subject)

    def render_empty(self, message: str) -> None:
        self.show_message(message)

    def render_subject(self, mine: Annotation | None, undone: Annotation | None) -> None:
        assert self.pair is not None
        self.form.reset(undone or mine, relabel=mine is not None,
                        linked=self.pair.world_id is not None)
        self.show_context()

    def answer(self) -> TrafficLabel | None:
        return self.built_label()

    def saved_words(self, label: Annotation) -> str:
        return "saved " + label_words(label)
