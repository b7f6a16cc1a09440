"""One dialogue in full: every turn in order; on each assistant turn the truth (the governing
guideline with category, key and phase, and for a violation the modified guideline followed and
the evidence) and the selected judge attempt's prediction (guideline, verdict, reason) with a
mark where it is wrong (wrong guideline, missed violation, false alarm, no prediction) and the
reviewers' error types for it.

`j` and `a` switch judge and attempt, `]`/`[` jump between wrong turns, `t` shows each
guideline's text from the document under the turn, `d` opens the document. Opened with enter
from the dialogues list (browse mode). Reads are keyed lookups in store/artifacts/dialogue_sql.py,
store/browse/dialogue_browse_sql.py and store/annotation/dialogue_reviews.py, repeated when the screen comes back
into view.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from copal_tui.tui.safe import one_line, safe
from copal_tui.tui.screens.dialogue_document import DialogueDocumentScreen
from copal_tui.tui.widgets.dialogue_error_types import type_name
from copal_tui.tui.widgets.dialogue_view import WRONG, prediction_lines, turn_renderable
from copal_tui.tui.widgets.screen_commands import Command, ScreenCommands
from copal_tui.tui.widgets.scroll_pane import ScrollPane
from store.annotation import dialogue_reviews
from store.artifacts import dialogue_sql
from store.browse import dialogue_browse_sql


class DialogueScreen(Screen[None]):
    COMMANDS = {ScreenCommands}
    DEFAULT_CSS = """
    DialogueScreen #dialogue-turns { height: 1fr; padding: 0 1; }
    DialogueScreen #dialogue-turns:focus { background: $boost; }
    DialogueScreen .turn { margin: 0 0 1 0; padding: 0 1; }
    DialogueScreen .turn.assistant { border-left: vkey $primary 40%; }
    DialogueScreen .turn.wrong { border-left: vkey $error; }
    DialogueScreen .turn.current { background: $boost; }
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
        self.d: dict[str, Any] | None = None
        self.attempts: list[dict[str, Any]] = []
        self.judge = judge
        self.attempt = attempt
        self.verdicts: dict[int, dict[str, Any]] = {}
        self.preds: dict[int, dict[str, Any]] = {}
        self.show_text = False
        self.current_turn: int | None = None

    # ------------------------------------------------------------------ data

    def load(self) -> None:
        db = self.app.db  # type: ignore[attr-defined]
        self.d = dialogue_sql.dialogue(db, self.dialogue_id)
        if self.d is None:
            return
        self.attempts = dialogue_browse_sql.judge_attempts(db, self.dialogue_id)
        judges = self.judges()
        if self.judge not in judges:
            self.judge = judges[0] if judges else None
        mine = self.attempts_of(self.judge)
        if self.attempt not in mine:
            ok = [a["attempt"] for a in self.attempts
                  if a["judge"] == self.judge and a["failure"] is None]
            self.attempt = (ok or mine or [None])[0]
        self.verdicts, self.preds = {}, {}
        if self.judge is not None and self.attempt is not None:
            self.verdicts = dialogue_browse_sql.turn_verdicts(db, self.dialogue_id, self.judge,
                                                              self.attempt)
            self.preds = dialogue_browse_sql.predictions_of(db, self.dialogue_id, self.judge,
                                                            self.attempt)

    def judges(self) -> list[str]:
        return list(dict.fromkeys(a["judge"] for a in self.attempts))

    def attempts_of(self, judge: str | None) -> list[int]:
        return [a["attempt"] for a in self.attempts if a["judge"] == judge]

    def wrong_turns(self) -> list[int]:
        return sorted(i for i, v in self.verdicts.items() if v["kind"] in WRONG)

    def kind_of(self, turn_index: int) -> str | None:
        v = self.verdicts.get(turn_index)
        return None if v is None else str(v["kind"])

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        self.load()
        yield Header()
        yield Static(self._summary(), id="dialogue-summary", classes="summary")
        with ScrollPane(id="dialogue-turns"):
            if self.d is None:
                yield Static(Text("This dialogue is not in the database (b goes back).",
                                  style="bold"))
            else:
                for turn in self.d["turns"]:
                    role = turn["role"] if turn["role"] in ("user", "assistant") else "other"
                    yield Static(id=f"turn-{turn['turn_index']}", classes=f"turn {role}")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"copal \u00b7 {self.dialogue_id}"
        self._fill()
        self.query_one("#dialogue-turns").focus()

    def on_screen_resume(self) -> None:
        # Back from the document or a review queue: reviews or attempts may be new.
        if self.is_mounted and self.d is not None:
            self.load()
            self._fill()

    def _summary(self) -> Text:
        if self.d is None:
            return safe(self.dialogue_id, style="bold")
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append_text(safe(one_line(self.d["id"], 60), style="bold"))
        out.append_text(safe(f"  \u00b7  {one_line(self.d['domain'], 30)}"))
        if self.d.get("variant_of"):
            out.append_text(safe(f"  \u00b7  variant of {one_line(self.d['variant_of'], 50)}"))
        turns = self.d["turns"]
        out.append(f"  \u00b7  {len(turns)} turns, "
                   f"{sum(1 for t in turns if t['violation'])} violation", style="dim")
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
        failure = next((a["failure"] for a in self.attempts if a["judge"] == self.judge
                        and a["attempt"] == self.attempt), None)
        if failure:
            out.append("attempt failed: ", style="bold")
            out.append_text(safe(one_line(failure, 80)))
            return out
        wrong = len(self.wrong_turns())
        out.append(f"{wrong} wrong", style="bold" if wrong else "")
        out.append(f" of {len(self.verdicts)} scored turns", style="dim")
        if wrong:
            out.append("  ] [ jump", style="dim")
        return out

    def _judge_lines(self, turn: dict[str, Any]) -> list[RenderableType]:
        if self.judge is None or self.attempt is None:
            return []
        i = turn["turn_index"]
        kind = self.kind_of(i)
        who = f"{self.judge} #{self.attempt}"
        lines = prediction_lines(self.preds.get(i), kind, who, self.d["guidelines"]
                                 if self.d else [], self.show_text, truth=turn)
        if kind in WRONG:
            db = self.app.db  # type: ignore[attr-defined]
            for r in dialogue_reviews.reviews_of_turn(db, self.dialogue_id, self.judge,
                                                      self.attempt, i):
                line = Text("  reviewed: ", style="dim")
                line.append(type_name(r.get("error_type")), style="bold")
                line.append_text(safe(f" by {one_line(r.annotator, 30)}", style="dim"))
                if r.get("note"):
                    line.append_text(safe(f" \u2014 {r.get('note')}", style="dim"))
                lines.append(line)
        return lines

    def _fill(self, only: set[int] | None = None) -> None:
        """Redraw the summary and every turn (or just the turns in `only`)."""
        # The summary is always two unwrapped lines: no layout pass for it.
        self.query_one("#dialogue-summary", Static).update(self._summary(), layout=False)
        if self.d is None:
            return
        for turn in self.d["turns"]:
            i = turn["turn_index"]
            if only is not None and i not in only:
                continue
            widget = self.query_one(f"#turn-{i}", Static)
            widget.update(turn_renderable(turn, self.d["guidelines"],
                                          judge_lines=self._judge_lines(turn),
                                          show_text=self.show_text,
                                          current=i == self.current_turn))
            widget.set_class(self.kind_of(i) in WRONG, "wrong")
            widget.set_class(i == self.current_turn, "current")

    # ------------------------------------------------------------------ actions

    def palette_commands(self) -> list[Command]:
        out: list[Command] = []
        for judge in self.judges():
            out.append((f"Judge: {one_line(judge, 60)}", "show this judge's predictions",
                        partial(self._select, judge, None)))
        return out

    def _select(self, judge: str | None, attempt: int | None) -> None:
        self.judge, self.attempt = judge, attempt
        self.load()
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
        changed = {target} if cur is None else {cur, target}
        self.current_turn = target
        self._fill(changed)
        self.query_one("#dialogue-turns", ScrollPane).scroll_to_widget(
            self.query_one(f"#turn-{target}"), top=True, animate=False)

    def action_texts(self) -> None:
        self.show_text = not self.show_text
        self._fill()

    def action_document(self) -> None:
        if self.d is None:
            return
        turn = next((t for t in self.d["turns"] if t["turn_index"] == self.current_turn), None)
        highlight = None if turn is None else (turn["category"], turn["key"], turn["phase"])
        self.app.push_screen(DialogueDocumentScreen(self.d, highlight))

    def action_back(self) -> None:
        self.app.pop_screen()
