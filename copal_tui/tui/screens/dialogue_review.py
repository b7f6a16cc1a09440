"""The judge-mistake review queue (`copal label --suite dialogue [--judge J]`): one wrong
prediction at a time (a compliant turn given the wrong guideline, a false alarm or no
prediction; a violation turn not flagged), with the conversation up to that turn, the truth
and the judge's prediction; the reviewer names the error type (keys 1-6, the taxonomy of
copal_tui.domain.dialogue), optionally with a note.

Not blind: the truth and the prediction are the point. The keys, layout and lifecycle
(queue, leases, writes that wait out a busy database, undo, skip, n/p, note, flag) are the
labelling base's (label_base.py, label_lifecycle.py); what is the review's here is the
conversation, the facts (the judge's prediction first, so it is on the first screen at 80x24,
then the truth) and the error-type picker with its keys 1-6. The note (e) goes with the review
itself rather than being an event of its own.

The conversation is a ConversationView (the reading pane the scroll keys act on): one block per
turn, keyed by the turn and whether it is the one under review, so a move renders only the
turns it changes (the turn left, the turn reached, any turn newly in view) and paints only the
lines on screen. The facts are a ConversationView of one block too: neither pane lays the
screen out again when its height changes, which on every move would cost more than the rest.
A long turn under review is shown a part at a time (`>`/`<`, widgets/long_text.py); the
turns before it show their first part (copal_tui.tui.safe).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical

from copal_tui.domain.dialogue import ERROR_TYPES
from copal_tui.services.annotation.views import (
    Annotation,
    Mistake,
    ReviewKey,
    StoredDialogue,
    judge_mistake,
    key_of,
    stored_dialogue,
)
from copal_tui.services.dialogues import StoredPrediction, TurnRow
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.screens.label_lifecycle import QueueLabelScreen
from copal_tui.tui.widgets.dialogue_error_types import (
    LINES,
    TYPES,
    ErrorTypePicker,
    type_name,
)
from copal_tui.tui.widgets.dialogue_view import (
    KIND_WORDS,
    ConversationView,
    TurnBlock,
    guideline_label,
    heading,
    prediction_lines,
    truth_lines,
    turn_header,
)
from copal_tui.tui.widgets.long_text import LongText

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import DialogueReview


def turn_view(turn: TurnRow, current: bool, text: LongText | None = None) -> Text:
    """One turn of the conversation; an earlier assistant turn with its truth, since errors
    like "ignored key evidence" hinge on what earlier turns established. `text`: the part of
    a long turn on screen (the turn under review is read a part at a time)."""
    out = turn_header(turn, current)
    out.append("\n")
    style = "bold" if current else ""
    out.append_text(safe(turn.content, style=style) if text is None else text.text(style))
    if turn.role == "assistant" and not current:
        out.append("\n  truth ", style="dim")
        out.append_text(guideline_label(turn.category, turn.key, turn.phase))
        out.append(" \u00b7 VIOLATION" if turn.violation else " \u00b7 compliant",
                   style="bold" if turn.violation else "dim")
    return out


def turn_block(turn: TurnRow, current: bool, text: LongText | None = None) -> TurnBlock:
    """The turn as a block of the conversation view: the turn under review with the error
    rule and a background, an earlier assistant turn with the muted rule."""
    tone = "wrong" if current else "assistant" if turn.role == "assistant" else ""
    part = None if text is None or text.part is None else text.part.index
    return TurnBlock((turn, current, part), partial(turn_view, turn, current, text), tone,
                     current)


def _painted(view: ConversationView) -> str:
    return "\n\n".join(view.block_plain(i) for i in range(len(view.blocks)))


class DialogueReviewScreen(QueueLabelScreen):
    HELP_TEXT = (
        "Judge mistakes: each item is a turn where a judge attempt's prediction is wrong by the "
        "metrics' rules (a compliant turn given the wrong guideline, flagged as a violation or "
        "left without a prediction; a violation turn not flagged). Name the cause with 1-6, "
        "then enter; e adds a note to the review; d shows the guideline document. The error "
        "types:\n" + "\n".join(f"  {n} {text}" for n, text in enumerate(ERROR_TYPES.values(), 1)))
    DEFAULT_CSS = """
    DialogueReviewScreen #review-side { width: 48%; }
    DialogueReviewScreen #review-context:focus { background: $boost; }
    DialogueReviewScreen #review-facts-pane { height: 1fr; }
    DialogueReviewScreen #review-facts-pane:focus { background: $boost; }
    DialogueReviewScreen #review-picker { border-top: solid $primary 40%; }
    """
    # Not in the footer (the picker names them); `?` and the palette list them.
    BINDINGS = [
        *[Binding(str(n), f"choose({n})", type_name(key), show=False,
                  id=f"dialogue_review.type{n}") for n, key in enumerate(TYPES, 1)],
        Binding("d", "document", "guideline document", show=False,
                id="dialogue_review.document"),
    ]
    PALETTE_PREFIX = "Review"
    SUITE = "dialogue"
    SUITE_KEYS = ("dialogue_review.", "Judge mistakes: the error type")
    DONE_WORD = "reviewed"
    SUBJECT_WORD = "mistake"
    READING_PANE = "#review-context"
    READ_FROM_END = True  # the turn under review ends the conversation shown
    NOTE_TITLE = "Note on this judge mistake"
    EMPTY = ("Nothing left for you in the queue: every judge mistake has your review or your "
             "skip. p goes back; q quits.")
    NOTHING = ("No judge mistakes to review: no judge has scored a dialogue turn wrongly yet. "
               "`copal run dialogue_judge --judge MODEL` judges the stored dialogues. q quits.")

    def __init__(self, judge: str | None = None, **kwargs: Any) -> None:
        super().__init__(judge=judge, **kwargs)
        self.row: Mistake | None = None
        self.dialogue: StoredDialogue | None = None
        # The dialogue's blocks by (turn index, under review): the same block objects from one
        # move to the next, so the view lays out the turns it has shown without a lookup.
        self._turn_blocks: dict[tuple[int, bool], TurnBlock] = {}
        self._loads = 0  # dialogues read: part of the facts' key (their guideline texts)
        self._key: tuple[str, ReviewKey] | None = None  # the subject last parsed, its key
        # The turn under review, a part at a time (widgets/long_text.py), and its key.
        self.turn_text = LongText(None)
        self._turn_text_of: ReviewKey | None = None
        # The panes, kept rather than looked up in the DOM on every move.
        self.view = ConversationView(id="review-context", classes="label-read")
        self.facts = ConversationView(id="review-facts-pane")
        self.picker = ErrorTypePicker(id="review-picker")

    @property
    def key(self) -> ReviewKey | None:
        subject = self.subject
        if subject is None:
            return None
        if self._key is None or self._key[0] != subject:
            self._key = (subject, key_of(subject))
        return self._key[1]

    def compose_panes(self) -> ComposeResult:
        yield self.view
        with Vertical(id="review-side", classes="label-side"):
            yield self.facts
            # Outside the scrolling facts, so the choice is always in view.
            yield self.picker

    def on_mount(self) -> None:
        self.title = "copal \u00b7 judge mistakes" + (
            f" of {one_line(self.judge, 40)}" if self.judge else "")
        self.picker.styles.height = LINES + 1  # its fixed lines and the border
        super().on_mount()

    # -------------------------------------------------------------- display

    def load(self, subject: str) -> bool:
        key, db = key_of(subject), self.copal.db
        self.row = judge_mistake(db, key)
        if self.dialogue is None or self.dialogue.id != key.dialogue_id:
            self.dialogue = stored_dialogue(db, key.dialogue_id)
            self._turn_blocks = {}
            self._loads += 1
        return self.row is not None and self.dialogue is not None

    def render_empty(self, message: str) -> None:
        self.row = None
        self.view.show([TurnBlock(("empty", message), lambda: Text(message, style="dim"))])
        self.facts.show([])
        self.picker.reset(None)

    def render_subject(self, mine: Annotation | None, undone: Annotation | None) -> None:
        chosen = undone or mine
        review = None if chosen is None else chosen.payload
        picker, relabel = self.picker, mine is not None
        # Moving between mistakes not reviewed yet leaves the picker as it is: not repainted.
        if (picker.error_type, picker.note, picker.relabel) != (
                None if review is None else review.get("error_type"),
                None if review is None else review.get("note"), relabel):
            picker.reset(review, relabel=relabel)
        # At once to the end, the turn under review (the view knows its height as soon as it
        # has the blocks), so no frame shows the new turns at the old offset.
        self.view.show(self._conversation())
        self.view.scroll_end(animate=False, immediate=True)
        assert self.row is not None
        self.facts.show([TurnBlock((self._loads, self.key, self.row), self._facts)])
        self.facts.scroll_home(animate=False, immediate=True)

    def _conversation(self) -> list[TurnBlock]:
        """The dialogue up to the turn under review: its id and domain, then a block per
        turn."""
        d, key = self.dialogue, self.key
        assert d is not None and key is not None
        blocks = [TurnBlock(("head", d.id, d.domain), partial(self._head, d))]
        for turn in d.turns:
            index = turn.turn_index
            if index > key.turn_index:
                break
            current = index == key.turn_index
            if current:
                if self._turn_text_of != key:
                    self.turn_text, self._turn_text_of = LongText.of(turn.content), key
                blocks.append(turn_block(turn, current, self.turn_text))
                continue
            block = self._turn_blocks.get((index, current))
            if block is None:
                block = self._turn_blocks[index, current] = turn_block(turn, current)
            blocks.append(block)
        return blocks

    def move_part(self, delta: int) -> bool:
        """The next (previous) part of a long turn under review."""
        if self.key is None or self.dialogue is None or not self.turn_text.move(delta):
            return False
        self.view.show(self._conversation())
        return True

    def show_part(self, delta: int) -> None:
        # The turn under review ends the conversation: its first line, not the dialogue's.
        self.view.scroll_to_block(len(self.view.blocks) - 1)

    @staticmethod
    def _head(d: StoredDialogue) -> Text:
        out = safe(one_line(d.id, 60), style="bold")
        out.append_text(safe(f"  \u00b7  {one_line(d.domain, 30)}", style="dim"))
        return out

    def context_text(self) -> str:
        """The conversation as painted, one line per row, blocks apart by a blank line (for
        tests and checks)."""
        return _painted(self.view)

    def facts_text(self) -> str:
        """The facts (mark, prediction, truth) as painted (for tests and checks)."""
        return _painted(self.facts)

    def _facts(self) -> RenderableType:
        row, key = self.row, self.key
        assert row is not None and key is not None and self.dialogue is not None
        guidelines = self.dialogue.guidelines
        # The mistake carries the turn's truth under the turn's names: it is the truth shown.
        pred = None if not row.predicted else StoredPrediction(
            row.turn_index, row.p_category, row.p_key, row.p_phase, int(row.p_violation or 0),
            row.p_reason)
        mark = Text(KIND_WORDS.get(row.kind, row.kind), style="bold reverse")
        mark.append("  d document", style="dim")
        # The prediction under review first: at 80x24 it is on the first screen.
        return Group(mark, heading("Judge's prediction"),
                     *prediction_lines(pred, row.kind, f"{key.judge} #{key.attempt}",
                                       guidelines, show_text=True, mark=False,
                                       binary=bool(row.binary_judge), truth=row),
                     Text(""), *truth_lines(row, guidelines, show_text=True))

    def status_extra(self) -> list[Text]:
        key = self.key
        if key is None:
            return []
        return [safe(f"\u00b7 {one_line(key.judge, 24)} #{key.attempt} \u00b7 "
                     f"{one_line(key.dialogue_id, 40)} turn {key.turn_index} ", style="dim")]

    # -------------------------------------------------------------- actions

    def action_choose(self, number: int) -> None:
        if self.key is None or not self.picker.choose(number):
            self.app.bell()

    def save_note(self, text: str | None) -> None:
        # The note goes with the review (its payload), not as an event of its own.
        if text is not None:
            self.picker.set_note(text)

    def answer(self) -> DialogueReview | None:
        from copal_tui.domain.annotation.payloads import DialogueReview

        if self.picker.error_type is None:
            self.notify("Choose the error type with 1-6, then enter.", severity="warning",
                        timeout=3)
            return None
        return DialogueReview(error_type=self.picker.error_type, note=self.picker.note)

    def saved_words(self, label: Annotation) -> str:
        return f"saved {type_name(label.get('error_type') or '')}"

    def action_document(self) -> None:
        if self.dialogue is None or self.row is None:
            self.app.bell()
            return
        self.app.push_screen(DialogueDocumentScreen(
            self.dialogue, (self.row.category, self.row.key, self.row.phase)))

