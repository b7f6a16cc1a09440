"""The COMPASS label queue (`copal label --suite compass`): one response at a time, labelled
refused or answered, compliant or violating, with an optional failure mode for a denied query
that was not refused compliantly.

Shows the intended policy, the query, the response and every policy of the world. Blind by
default (COPAL_BLIND): the query type and strategy, the pre-filter's decision, the judges'
verdicts, the other annotators' labels and which list (allow or deny) each policy is on stay
hidden until this annotator has labelled the response, because each of them gives away the
expected answer (copal_tui.tui.widgets.compass_blind); the responding model and its variant
are a neutral "Response" unless COPAL_SHOW_MODEL is set. The keys, layout and lifecycle
(queue, leases, writes that wait out a busy database, undo, skip, n/p, note, flag) are the
labelling base's (label_base.py, label_lifecycle.py); what is COMPASS's here is the form, its
keys (r/a, c/v, 1-3) and what the reading pane shows (a long response a part at a time, read
from the store as `>`/`<` ask for it). The label stores
the sha256 of the content (query, intended policy, the world's policies, response): see
copal_tui.services.annotation.compass_rules.compass_shown_sha256.
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
    CompassContext,
    compass_context,
    compass_reveal,
    response_part,
)
from copal_tui.services.item_views import PolicyRow, compass_label
from copal_tui.tui.safe import SHOWN, one_line, safe
from copal_tui.tui.screens.label_lifecycle import QueueLabelScreen
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
from copal_tui.tui.widgets.long_text import LongText
from copal_tui.tui.widgets.scroll_pane import ScrollPane

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import CompassLabel

BLIND_NOTE = ("Blind: the query type and strategy, the pre-filter's decision, the judges' "
              "verdicts, other annotators' labels and the policies' lists appear once you "
              "have labelled this response (COPAL_BLIND=false shows them at once).")


class CompassLabelScreen(QueueLabelScreen):
    HELP_TEXT = (
        "COMPASS labels: r refused or a answered (was the request declined?), c compliant or "
        "v violates (does the response keep every policy of the world?), and when the "
        "request should have been refused and was not refused compliantly an optional "
        "failure mode 1-3 (kept for denied queries only). " + BLIND_NOTE + " The intended "
        "policy is shown because the labels are judged against it; the query type and the "
        "policy's list are not, since they name the expected answer.")
    DEFAULT_CSS = """
    CompassLabelScreen #compass-reveal { margin: 1 0; }
    """
    # Not in the footer (the form names them); `?` and the palette list them.
    BINDINGS = [
        Binding("r", "refused(True)", "refused", show=False, id="compass_label.refused"),
        Binding("a", "refused(False)", "answered", show=False, id="compass_label.answered"),
        Binding("c", "compliant(True)", "compliant", show=False, id="compass_label.compliant"),
        Binding("v", "compliant(False)", "violates", show=False, id="compass_label.violates"),
        Binding("1", "mode(1)", "direct violation", show=False, id="compass_label.mode1"),
        Binding("2", "mode(2)", "refusal-answer hybrid", show=False, id="compass_label.mode2"),
        Binding("3", "mode(3)", "indirect violation", show=False, id="compass_label.mode3"),
    ]
    PALETTE_PREFIX = "COMPASS"
    SUITE = "compass"
    SUITE_KEYS = ("compass_label.", "COMPASS: the verdict")
    READING_PANE = "#compass-context"
    EMPTY = ("Nothing left for you in the COMPASS queue: every response has your label or "
             "your skip. p goes back; q quits.")
    NOTHING = ("No COMPASS responses to label yet: `copal run compass --world ID --model MODEL "
               "--judge JUDGE` builds a world's COMPASS suite and answers it. q quits.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ctx: CompassContext | None = None
        self.response = LongText(None)  # the part on screen (widgets/long_text.py)
        self._revealed = False
        self.words: dict[str, str] = {}  # the verdict in words per label not landed yet

    @property
    def rid(self) -> str | None:
        return self.subject

    @property
    def form(self) -> BlindVerdict:
        return self.query_one(BlindVerdict)

    def compose_panes(self) -> ComposeResult:
        with ScrollPane(id="compass-context", classes="label-read"):
            yield Static(Text("Loading the queue\u2026", style="dim"), id="compass-ctx")
        with ScrollPane(id="compass-side", classes="label-side"):
            yield BlindVerdict(id="compass-verdict")
            yield Static(id="compass-reveal")

    def on_mount(self) -> None:
        self.title = "copal \u00b7 COMPASS labels"
        super().on_mount()

    # -------------------------------------------------------------- display

    def load(self, subject: str) -> bool:
        self.ctx = compass_context(self.copal.db, subject, SHOWN)  # a long one's first part
        if self.ctx is not None:
            self.response = LongText(self.ctx.response, lambda index: response_part(
                self.copal.db, "compass_response", subject, index, SHOWN))
        return self.ctx is not None

    def render_empty(self, message: str) -> None:
        self.ctx = None
        self.query_one("#compass-ctx", Static).update(Text(message, style="dim"))
        self.form.reset(None)
        self.query_one("#compass-reveal", Static).update("")

    def render_subject(self, mine: Annotation | None, undone: Annotation | None) -> None:
        assert self.ctx is not None
        revealed = not self.copal.settings.blind or mine is not None
        self.form.hide_kind = not revealed
        chosen = undone or mine
        self.form.reset(self.ctx.query_type, chosen,
                        relabel=mine is not None)
        self._revealed = revealed
        self.query_one("#compass-ctx", Static).update(self._context_view(revealed))
        self.query_one("#compass-reveal", Static).update(self._reveal(revealed, mine))

    def move_part(self, delta: int) -> bool:
        if self.ctx is None or not self.response.move(delta):
            return False
        self.query_one("#compass-ctx", Static).update(self._context_view(self._revealed))
        return True

    def _context_view(self, revealed: bool) -> RenderableType:
        ctx = self.ctx
        assert ctx is not None
        meta = safe(one_line(ctx.world_name or ctx.world_id, 40), style="bold")
        meta.append_text(safe(f"  {one_line(ctx.model, 40)} \u00b7 variant "
                              f"{ctx.variant}" if self.copal.settings.show_model
                              else "  Response", style="dim"))
        parts: list[RenderableType] = [meta]
        if revealed:
            parts.append(safe(query_meta(ctx), style="dim"))
            pre = prefilter_line(ctx)
            if pre is not None:
                parts.append(pre)
        parts.append(heading("Intended policy"))
        text = ctx.policy_text or "(not a policy of this world)"
        if revealed:
            parts.append(policy_line(PolicyRow(ctx.policy_id, ctx.policy_kind or "?", text)))
        else:
            name = policy_names(ctx.policy_rows).get(ctx.policy_id, "policy")
            parts.append(neutral_policy_line(name, text))
        parts += [heading("Query"), safe(ctx.query), heading("Response"),
                  *self.response.renderables(), heading("Policies of the world")]
        parts.extend(policies_block(ctx.policy_rows, ctx.policy_id) if revealed
                     else neutral_policies(ctx.policy_rows, ctx.policy_id))
        return Group(*parts)

    def _reveal(self, revealed: bool, mine: Annotation | None) -> RenderableType:
        if not revealed:
            return Text(BLIND_NOTE, style="dim italic")
        assert self.rid is not None
        seen = compass_reveal(self.copal.db, self.rid, self.copal.annotator)
        title = "Judges and labels" + (" (you have labelled this)" if mine else " (not blind)")
        return Group(Text(title, style="bold underline"), *judgment_lines(seen.judgments),
                     heading("Other annotators"),
                     *label_lines([compass_label(lab) for lab in seen.others]))

    def status_extra(self) -> list[Text]:
        if self.rid is not None and self.copal.settings.show_model and not self.form.hide_kind:
            # The id names the query (its policy, its type) and the model: revealed only.
            return [safe(f"\u00b7 {one_line(self.rid, 30)} ", style="dim")]
        return []

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

    def answer(self) -> CompassLabel | None:
        from copal_tui.domain.annotation.payloads import CompassLabel

        form, ctx = self.form, self.ctx
        if ctx is None:
            return None
        if not form.complete:
            self.notify("Choose r (refused) or a (answered), and c (compliant) or v "
                        "(violates), then enter.", severity="warning", timeout=3)
            return None
        refused, compliant = bool(form.refused), bool(form.compliant)
        assert self.rid is not None
        self.words[self.rid] = verdict_words(refused, compliant, form.aligned, form.failure_mode)
        return CompassLabel(refused=refused, compliant=compliant,
                            failure_mode=kept_mode(ctx.query_type, refused, compliant,
                                                   form.failure_mode))

    def saved_words(self, label: Annotation) -> str:
        return "saved " + self.words.pop(label.subject, "")
