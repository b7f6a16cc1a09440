"""One dialogue in full: every turn in order; on each assistant turn the truth (the governing
guideline with category, key and phase, and for a violation the modified guideline followed and
the evidence) and the selected judge attempt's prediction (guideline, verdict, reason) with a
mark where it is wrong (wrong guideline, missed violation, false alarm, no prediction) and the
reviewers' error types for it.

`j` and `a` switch judge and attempt, `]`/`[` jump between wrong turns, `t` shows each
guideline's text from the document under the turn, `d` opens the document. Opened with enter
from the dialogues list (browse mode). Reads go through copal_tui/services/dialogues.py: the
dialogue when the screen opens or comes back into view, the attempt when it changes. The
conversation is one ConversationView: a key renders only the turns it changes.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, Static

from copal_tui.services.dialogues import (
    AttemptDetail,
    DialogueDetail,
    StoredDialogue,
    TurnRow,
    attempt_detail,
    dialogue_detail,
)
from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.widgets.dialogue_error_types import type_name
from copal_tui.tui.widgets.dialogue_view import (
    WRONG,
    ConversationView,
    TurnBlock,
    prediction_lines,
    turn_renderable,
)
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.screen_commands import Command, ScreenCommands


class DialogueScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    DEFAULT_CSS = """
    DialogueScreen #dialogue-turns { height: 1fr; padding: 0 1; }
    DialogueScreen #dialogue-turns:focus { background: $boost; }
    """
    BINDINGS = [
        Binding("j", "judge", "Judge", id="dialogue.judge"),
        Binding("a", "attempt", "Attempt", id="dialogue.attempt"),
        Binding("right_square_bracket", "wrong(1)", "Next wrong", id="dialogue.next_wrong"),
        Binding("left_square_bracket", "wrong(-1)", "Prev wrong", show=False,
                id="dialogue.prev_wrong"),
        Binding("t", "texts", "Texts", id="dialogue.texts"),
        Binding("d", "document", "Document", id="dialogue.document"),
        Binding("escape,b", "back", "Back", id="dialogue.back"),
    ]

    def __init__(self, dialogue_id: str, judge: str | None = None,
                 attempt: int | None = None) -> None:
        super().__init__()
        self.dialogue_id = dialogue_id
        self.detail: DialogueDetail | None = None
        self.judge = judge
        self.attempt = attempt
        self.shown = AttemptDetail()
        self.show_text = False
        self.current_turn: int | None = None
        self._first_block: dict[int, int] = {}  # turn index -> its first block in the view
        self._turn_blocks: dict[int, list[TurnBlock]] = {}  # turn index -> its blocks

    # ------------------------------------------------------------------ data

    @property
    def d(self) -> StoredDialogue | None:
        return None if self.detail is None else self.detail.dialogue

    def load(self) -> None:
        """Read the dialogue and its attempts, then the selected attempt."""
        self.detail = dialogue_detail(self.app.db, self.dialogue_id)  # type: ignore[attr-defined]
        self._load_attempt()

    def _load_attempt(self) -> None:
        detail = self.detail
        if detail is None:
            return
        judges = detail.judges()
        if self.judge not in judges:
            self.judge = judges[0] if judges else None
        if self.attempt not in detail.attempts_of(self.judge):
            self.attempt = detail.first_attempt(self.judge)
        self.shown = AttemptDetail()
        if self.judge is not None and self.attempt is not None:
            self.shown = attempt_detail(self.app.db, self.dialogue_id,  # type: ignore[attr-defined]
                                        self.judge, self.attempt)

    def judges(self) -> list[str]:
        return [] if self.detail is None else self.detail.judges()

    def attempts_of(self, judge: str | None) -> list[int]:
        return [] if self.detail is None else self.detail.attempts_of(judge)

    def wrong_turns(self) -> list[int]:
        return self.shown.wrong_turns()

    def kind_of(self, turn_index: int) -> str | None:
        return self.shown.kinds.get(turn_index)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        self.load()
        yield Header()
        yield Static(self._summary(), id="dialogue-summary", classes="summary")
        yield ConversationView(id="dialogue-turns")
        yield Footer()

    @property
    def view(self) -> ConversationView:
        return self.query_one("#dialogue-turns", ConversationView)

    def on_mount(self) -> None:
        self.title = f"copal \u00b7 {self.dialogue_id}"
        self._fill()
        self.view.focus()

    def on_screen_resume(self) -> None:
        # Back from the document or a review queue: reviews or attempts may be new.
        if self.is_mounted and self.d is not None:
            self.load()
            self._fill()

    def _summary(self) -> Text:
        if self.d is None or self.detail is None:
            return safe(self.dialogue_id, style="bold")
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append_text(safe(one_line(self.d.id, 60), style="bold"))
        out.append_text(safe(f"  \u00b7  {one_line(self.d.domain, 30)}"))
        if self.d.variant_of:
            out.append_text(safe(f"  \u00b7  variant of {one_line(self.d.variant_of, 50)}"))
        turns = self.d.turns
        out.append(f"  \u00b7  {len(turns)} turns, "
                   f"{sum(1 for t in turns if t.violation)} violation", style="dim")
        out.append("\n")
        if self.judge is None:
            out.append("no judge has judged this dialogue yet", style="italic")
            return out
        out.append("judge ", style="dim")
        out.append_text(safe(one_line(self.judge, 40), style="bold"))
        judges, attempts = self.judges(), self.attempts_of(self.judge)
        out.append(f" ({judges.index(self.judge) + 1}/{len(judges)}, j)  attempt ", style="dim")
        out.append(str(self.attempt), style="bold")
        out.append(f" of {len(attempts)} (a)  \u00b7  ", style="dim")
        failure = self.detail.failure(self.judge, self.attempt)
        if failure:
            out.append("attempt failed: ", style="bold")
            out.append_text(safe(one_line(failure, 80)))
            return out
        wrong = len(self.wrong_turns())
        out.append(f"{wrong} wrong", style="bold" if wrong else "")
        out.append(f" of {len(self.shown.kinds)} scored turns", style="dim")
        if wrong:
            out.append("  ] [ jump", style="dim")
        return out

    def _judge_lines(self, turn: TurnRow) -> list[RenderableType]:
        if self.judge is None or self.attempt is None:
            return []
        i = turn.turn_index
        kind = self.kind_of(i)
        who = f"{self.judge} #{self.attempt}"
        pred = self.shown.predictions.get(i)
        lines = prediction_lines(pred, kind, who,
                                 self.d.guidelines if self.d else (), self.show_text,
                                 truth=turn)
        if kind in WRONG:
            for r in self.shown.reviews.get(i, ()):
                line = Text("  reviewed: ", style="dim")
                line.append(type_name(r.error_type), style="bold")
                line.append_text(safe(f" by {one_line(r.annotator, 30)}", style="dim"))
                if r.note:
                    line.append_text(safe(f" \u2014 {r.note}", style="dim"))
                lines.append(line)
        return lines

    def _blocks(self, turn: TurnRow) -> list[TurnBlock]:
        """One turn as the view shows it: the turn with its truth, then (an assistant turn of
        a judged dialogue) the judge's lines, joined without a gap. Each key holds everything
        its lines depend on, so switching attempts renders only the judge's lines, and
        moving the highlight only the turns left and reached."""
        assert self.d is not None
        i, role = turn.turn_index, turn.role
        kind, current = self.kind_of(i), i == self.current_turn
        tone = "wrong" if kind in WRONG else "assistant" if role == "assistant" else ""
        guidelines, show_text = self.d.guidelines, self.show_text
        body = TurnBlock((turn, show_text, current),
                         partial(turn_renderable, turn, guidelines, show_text=show_text,
                                 current=current), tone, current)
        if role != "assistant" or self.judge is None or self.attempt is None:
            return [body]
        pred = self.shown.predictions.get(i)
        key = (i, show_text, current, self.judge, self.attempt, kind,
               self.shown.reviews.get(i), pred)
        lines = partial(self._judge_group, turn)
        return [replace(body, gap=False), TurnBlock(key, lines, tone, current)]

    def _judge_group(self, turn: TurnRow) -> RenderableType:
        return Group(*self._judge_lines(turn))

    def _fill(self, only: set[int] | None = None) -> None:
        """Redraw the summary and the conversation, or (`only`) just rebuild the blocks of
        these turns; the view renders only blocks whose key it has not rendered before."""
        if self.d is None:
            self._summary_update()
            self.view.show([TurnBlock("missing", lambda: Text(
                "This dialogue is not in the database (b goes back).", style="bold"))])
            return
        if only is None:
            self._summary_update()
            self._turn_blocks = {t.turn_index: self._blocks(t) for t in self.d.turns}
        else:
            for t in self.d.turns:
                if t.turn_index in only:
                    self._turn_blocks[t.turn_index] = self._blocks(t)
        blocks: list[TurnBlock] = []
        self._first_block = {}
        for i, turn_blocks in self._turn_blocks.items():
            self._first_block[i] = len(blocks)
            blocks += turn_blocks
        self.view.show(blocks)

    def _summary_update(self) -> None:
        # The summary is always two unwrapped lines: no layout pass for it.
        self.query_one("#dialogue-summary", Static).update(self._summary(), layout=False)

    def turn_block(self, turn_index: int) -> TurnBlock:
        """The first block of the turn (its tone and highlight are the turn's)."""
        return self.view.blocks[self._first_block[turn_index]]

    def turn_plain(self, turn_index: int) -> str:
        """The turn as painted, without its rule (for tests and checks)."""
        first = self._first_block[turn_index]
        blocks = self.view.blocks
        last = next(k for k in range(first, len(blocks)) if blocks[k].gap)
        return "\n".join(self.view.block_plain(k) for k in range(first, last + 1))

    # ------------------------------------------------------------------ actions

    def palette_commands(self) -> list[Command]:
        out: list[Command] = []
        for judge in self.judges():
            out.append((f"Judge: {one_line(judge, 60)}", "show this judge's predictions",
                        partial(self._select, judge, None)))
        return out

    def _select(self, judge: str | None, attempt: int | None) -> None:
        self.judge, self.attempt = judge, attempt
        self._load_attempt()
        self._fill()

    def action_judge(self) -> None:
        judges = self.judges()
        if len(judges) < 2:
            self.notify("Only one judge has judged this dialogue." if judges else
                        "No judge has judged this dialogue.", timeout=2)
            return
        self._select(judges[(judges.index(self.judge or judges[0]) + 1) % len(judges)], None)

    def action_attempt(self) -> None:
        attempts = self.attempts_of(self.judge)
        if len(attempts) < 2:
            self.notify("This judge has one attempt on this dialogue." if attempts else
                        "No judge has judged this dialogue.", timeout=2)
            return
        nxt = attempts[(attempts.index(self.attempt) + 1) % len(attempts)] \
            if self.attempt in attempts else attempts[0]
        self._select(self.judge, nxt)

    def action_wrong(self, delta: int) -> None:
        wrong = self.wrong_turns()
        if not wrong:
            self.notify("This attempt has no wrong prediction here.", timeout=2)
            return
        cur = self.current_turn
        if cur is None:
            target = wrong[0] if delta > 0 else wrong[-1]
        elif delta > 0:
            target = next((i for i in wrong if i > cur), wrong[0])
        else:
            target = next((i for i in reversed(wrong) if i < cur), wrong[-1])
        # Only the turn left and the turn reached change (a long dialogue has many turns).
        self.current_turn = target
        self._fill({target} if cur is None else {cur, target})
        self.view.scroll_to_block(self._first_block[target], top=True)

    def action_texts(self) -> None:
        self.show_text = not self.show_text
        self._fill()

    def action_document(self) -> None:
        if self.d is None:
            return
        turn = next((t for t in self.d.turns if t.turn_index == self.current_turn), None)
        highlight = None if turn is None else (turn.category, turn.key, turn.phase)
        self.app.push_screen(DialogueDocumentScreen(self.d, highlight))

    def action_back(self) -> None:
        self.app.pop_screen()
