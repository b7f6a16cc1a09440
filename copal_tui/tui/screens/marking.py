"""The base of the two marking screens (label queue, adjudication): the shared keys, layout,
note and flag prompts, and a command-palette provider listing the screen's actions.

Not a screen of its own (not in SCREENS). The keys are the issue's defaults, each a Binding with
an id that COPAL_KEYMAP can remap; both screens use the same ids so remapping a label key
remaps it for adjudication too ("the adjudicator decides with the same keys").
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from copal_tui.tui.widgets.contract_marks import ContractMarks
from copal_tui.tui.widgets.label_context import LabelContext
from copal_tui.tui.widgets.marks_matrix import MarksMatrix
from copal_tui.tui.widgets.scroll_pane import ScrollPane

if TYPE_CHECKING:
    from copal_tui.tui.app import CopalApp

MARK_BINDINGS: list[Binding] = [
    Binding("1", "mark(1)", "mark", key_display="1-9", id="label.mark1"),
    *[Binding(str(n), f"mark({n})", f"toggle item {n}", show=False, id=f"label.mark{n}")
      for n in range(2, 10)],
    Binding("enter", "submit", "submit", id="label.submit"),
    Binding("c", "correct", "correct", id="label.correct"),
    Binding("u", "undo", "undo", id="label.undo"),
    Binding("s", "skip", "skip", id="label.skip"),
    Binding("n", "note", "note", id="label.note"),
    Binding("f", "flag", "flag", id="label.flag"),
    # One footer entry for both arrows (a footer group renders without a gap at 80 columns).
    Binding("left", "move(-1)", "move", key_display="\u2190\u2192", id="label.prev"),
    Binding("right", "move(1)", "next response", show=False, id="label.next"),
    Binding("j", "cursor(1)", "cursor down the contract", show=False, id="label.cursor_down"),
    Binding("k", "cursor(-1)", "cursor up the contract", show=False, id="label.cursor_up"),
    Binding("space", "toggle_cursor", "toggle the item at the cursor", show=False,
            id="label.toggle_cursor"),
    Binding("q", "quit_queue", "quit", id="label.quit"),
]


class ScreenActions(Provider):
    """Command palette entries for every described binding of the active marking screen."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        screen = self.screen
        prefix = getattr(screen, "PALETTE_PREFIX", "")
        out = []
        for b in getattr(screen, "BINDINGS", []):
            if isinstance(b, Binding) and b.description and b.id != "label.quit":
                title = f"{prefix}: {b.description}"
                help_text = f"key {self.app.get_key_display(b)} ({b.id})"
                out.append((title, partial(screen.run_action, b.action), help_text))
        return out

    async def discover(self) -> Hits:
        for title, command, help_text in self._commands():
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, help=help_text)


class MarkingScreen(Screen[None]):
    """Layout and shared actions; subclasses implement submit/correct/undo/skip/move."""

    COMMANDS = {ScreenActions}
    PALETTE_PREFIX = ""
    MATRIX_FIRST = False
    DEFAULT_CSS = """
    MarkingScreen #queue-status { height: 1; background: $boost; }
    MarkingScreen #marking-body { height: 1fr; }
    MarkingScreen #marking-context { width: 1fr; padding: 0 1; }
    MarkingScreen #marking-side { width: 45%; padding: 0 1; border-left: vkey $primary 40%; }
    MarkingScreen #marking-context:focus, MarkingScreen #marking-side:focus {
        background: $boost;
    }
    MarkingScreen #marks-matrix, MarkingScreen #marks-remarks { margin: 1 0; }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(""), id="queue-status")
        with Horizontal(id="marking-body"):
            yield LabelContext(id="marking-context")
            with ScrollPane(id="marking-side"):
                if self.MATRIX_FIRST:
                    # Adjudication: the disagreement first, the decision under it.
                    yield MarksMatrix(part="table", id="marks-matrix")
                    yield ContractMarks(id="contract-marks")
                    yield MarksMatrix(part="remarks", id="marks-remarks")
                else:
                    yield ContractMarks(id="contract-marks")
                    yield MarksMatrix(id="marks-matrix")
        yield Footer(compact=True, show_command_palette=False)

    # -------------------------------------------------------------- parts

    @property
    def copal(self) -> CopalApp:
        """The app, typed (db, db_path, settings, annotator)."""
        return cast("CopalApp", self.app)

    @property
    def marks(self) -> ContractMarks:
        return self.query_one(ContractMarks)

    @property
    def matrix(self) -> MarksMatrix:
        return self.query_one("#marks-matrix", MarksMatrix)

    @property
    def context_pane(self) -> LabelContext:
        return self.query_one(LabelContext)

    status_text = ""

    def set_status(self, text: Text) -> None:
        self.status_text = text.plain
        self.query_one("#queue-status", Static).update(text)

    def on_mount(self) -> None:
        self.context_pane.focus()

    # -------------------------------------------------------------- shared actions

    def action_mark(self, number: int) -> None:
        if not self.has_current() or not self.marks.toggle(number):
            self.app.bell()

    def action_cursor(self, delta: int) -> None:
        self.marks.move_cursor(delta)

    def action_toggle_cursor(self) -> None:
        if not self.has_current() or not self.marks.toggle_cursor():
            self.app.bell()

    def action_note(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        from copal_tui.tui.screens.label_note import NoteScreen

        self.app.push_screen(NoteScreen(), self.save_note)

    def action_flag(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        from copal_tui.tui.screens.label_flag import FlagScreen

        self.app.push_screen(FlagScreen(), self.save_flag)

    def action_quit_queue(self) -> None:
        """Release what we hold, then quit (`copal label`/`adjudicate`) or, when the screen was
        opened over another one (from the browser's palette), go back to it."""
        self.leave()
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    def on_contract_marks_changed(self, _event: ContractMarks.Changed) -> None:
        self.marks_changed()

    # -------------------------------------------------------------- hooks

    def has_current(self) -> bool:
        raise NotImplementedError

    def save_note(self, text: str | None) -> None:
        raise NotImplementedError

    def save_flag(self, reason: str | None) -> None:
        raise NotImplementedError

    def leave(self) -> None:
        """Give back whatever the screen holds (leases) before the app exits."""

    def marks_changed(self) -> None:
        """Called after every toggle (the verdict line redraws itself)."""
