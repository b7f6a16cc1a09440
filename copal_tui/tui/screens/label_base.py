"""The base of every labelling screen (the COPAL, COMPASS and dialogue-review queues and
adjudication): the one keymap, the layout, the status line and the pieces of the lifecycle that
do not depend on where the subjects come from.

One keymap: the common keys are bound here, once, each with one id (`queue.*`), so the same key
does the same thing in every queue and one COPAL_KEYMAP entry remaps it in all of them. A
screen adds only its suite's keys (COPAL marks, COMPASS verdicts, dialogue error types) and
draws them in its form, so the footer has room for every common key at 80 columns.

Reading: the keys that scroll the response (PgUp/PgDn, shift+up/down) and page a long one
(`>`/`<`, the reading pane's `move_part`) are priority bindings of the screen, so they act on
the reading pane whatever has focus, and focus goes back to the reading pane on every new
subject (a Tab into the form never carries over to the next one).

Layout: a status line, the reading pane (left) and the form pane (right); a screen yields the
two panes from `compose_panes`. `QueueLabelScreen` (label_lifecycle.py) adds the queue's
lifecycle on top of this.
"""

from __future__ import annotations

import importlib
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Static

from copal_tui.tui.busy import QueueWrites
from copal_tui.tui.safe import one_line
from copal_tui.tui.widgets.footer import Footer
from copal_tui.tui.widgets.long_text import part_bindings
from copal_tui.tui.widgets.scroll_pane import ScrollPane

if TYPE_CHECKING:
    from textual.binding import BindingType

# The common keys of every labelling screen. Left/right are the same bindings as n/p (one id,
# so remapping `queue.next` remaps both). `?` (the keys screen) is the app's `app.help`.
COMMON_BINDINGS: list[BindingType] = [
    Binding("enter", "submit", "submit", id="queue.submit"),
    Binding("u", "undo", "undo", id="queue.undo"),
    Binding("s", "skip", "skip", id="queue.skip"),
    Binding("n,right", "move(1)", "move", key_display="n/p", id="queue.next"),
    Binding("p,left", "move(-1)", "previous", show=False, id="queue.prev"),
    Binding("e", "note", "note", id="queue.note"),
    Binding("f", "flag", "flag", id="queue.flag"),
    Binding("q", "quit_queue", "quit", id="queue.quit"),
    # Priority: they scroll what is being judged even when the form pane has focus.
    Binding("pagedown", "read_page(1)", "scroll", key_display="PgUp/Dn", priority=True,
            id="queue.page_down"),
    Binding("pageup", "read_page(-1)", "page up the response", show=False, priority=True,
            id="queue.page_up"),
    Binding("shift+down", "read_line(1)", "line down the response", show=False,
            priority=True, id="queue.line_down"),
    Binding("shift+up", "read_line(-1)", "line up the response", show=False, priority=True,
            id="queue.line_up"),
    # A long response is read a part at a time (widgets/long_text.py).
    *part_bindings("queue"),
]
COMMON_IDS = frozenset(b.id for b in COMMON_BINDINGS if isinstance(b, Binding) and b.id)


def load_payload_models() -> None:
    """Load the payload models every write is built as (pydantic, about 0.1 s), from a worker
    thread once the screen is up, so neither the start nor the first write waits for them."""
    importlib.import_module("copal_tui.domain.annotation.payloads")


class ScreenActions(Provider):
    """Command-palette entries for every described key of the active labelling screen
    ("Label: correct"), the app's own left out."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        screen, app = self.screen, self.app
        prefix = getattr(screen, "PALETTE_PREFIX", "")
        out, seen = [], set()
        for active in screen.active_bindings.values():
            b = active.binding
            if active.node is app or not b.description or b.id in ("queue.quit", None) \
                    or b.id in seen:
                continue
            seen.add(b.id)
            out.append((f"{prefix}: {b.description}", partial(screen.run_action, b.action),
                        f"key {app.get_key_display(b)} ({b.id})"))
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


class LabelScreen(QueueWrites, Screen[None]):
    """Layout, common keys, status line, scrolling, note/flag prompts and quitting."""

    COMMANDS = {ScreenActions}
    BINDINGS: ClassVar[list[BindingType]] = COMMON_BINDINGS
    PALETTE_PREFIX = ""
    READING_PANE = "#label-read"  # the pane PgUp/PgDn scroll (any scrollable widget)
    NOTE_TITLE = "Note on this response"
    # The suite's own keys, for the help screen's second part (id prefix, heading).
    SUITE_KEYS: tuple[str, str] = ("", "")
    DEFAULT_CSS = """
    LabelScreen #queue-status { height: 1; background: $boost; }
    LabelScreen #label-body { height: 1fr; }
    LabelScreen .label-read { width: 1fr; padding: 0 1; }
    LabelScreen .label-side { width: 42%; padding: 0 1; border-left: vkey $primary 40%; }
    LabelScreen .label-read:focus, LabelScreen .label-side:focus { background: $boost; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.last_saved: Text | None = None
        self.status_text = ""
        self._status_widget: Static | None = None
        self._other_panes: list[ScrollPane] | None = None
        self._reading: Widget | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(""), id="queue-status")
        with Horizontal(id="label-body"):
            yield from self.compose_panes()
        yield Footer(compact=True, show_command_palette=False)

    def compose_panes(self) -> ComposeResult:
        """The reading pane (a scrollable widget matching READING_PANE) and the form pane."""
        raise NotImplementedError

    def on_mount(self) -> None:
        self.reading_pane.focus()

    # -------------------------------------------------------------- reading

    @property
    def reading_pane(self) -> Widget:
        if self._reading is None or not self._reading.is_attached:
            self._reading = self.query_one(self.READING_PANE, Widget)
        return self._reading

    def action_read_page(self, delta: int) -> None:
        pane = self.reading_pane
        (pane.scroll_page_down if delta > 0 else pane.scroll_page_up)(animate=False)

    def action_read_line(self, delta: int) -> None:
        pane = self.reading_pane
        (pane.scroll_down if delta > 0 else pane.scroll_up)(animate=False)

    def move_part(self, delta: int) -> bool:
        """Show the next (previous) part of the long text being read; False when there is
        none. The reading pane's own `move_part`, when it has one."""
        move = getattr(self.reading_pane, "move_part", None)
        return bool(callable(move) and move(delta))

    def action_read_part(self, delta: int) -> None:
        """`>`/`<`: the next (previous) part, read from its start (see `show_part`)."""
        if not self.move_part(delta):
            self.app.bell()
            return
        self.show_part(delta)

    def show_part(self, delta: int) -> None:
        """Scroll to a part just shown: the pane's top going on, its end going back."""
        pane = self.reading_pane
        if delta > 0:
            pane.scroll_home(animate=False)
        else:
            self.call_after_refresh(pane.scroll_end, animate=False)

    def reset_reading(self, *, end: bool = False) -> None:
        """A new subject: focus back on the reading pane, at its top (or its end), and every
        other pane at its top."""
        pane = self.reading_pane
        pane.focus()
        if self._other_panes is None:  # the panes are composed once: looked up once
            self._other_panes = [p for p in self.query(ScrollPane) if p is not pane]
        for other in self._other_panes:
            other.scroll_home(animate=False)
        if end:
            # The content was just replaced: scroll once it is laid out.
            self.call_after_refresh(pane.scroll_end, animate=False)
        else:
            pane.scroll_home(animate=False)

    # -------------------------------------------------------------- status line

    def set_status(self, text: Text) -> None:
        self.status_text = text.plain
        if self._status_widget is None:  # looked up once, not on every key
            found = self.query("#queue-status")
            self._status_widget = found.first(Static) if found else None
        line = self._status_widget
        if line is not None and line.is_attached:  # a worker may report after a close
            line.update(text, layout=False)

    def status_line(self, progress: str, *extra: Text) -> Text:
        """The annotator, the progress ("12/200 of campaign NAME"), the screen's own parts,
        what waits for the database and the last thing saved."""
        out = Text(f" {one_line(self.copal.annotator, 24)} ", style="bold reverse")
        out.append(f" {progress} ", style="bold")
        for part in extra:
            out.append_text(part)
        out.append_text(self.waiting_text())
        if self.last_saved is not None:
            out.append_text(self.last_saved)
        return out

    def _saved(self, what: str, style: str = "green") -> None:
        self.last_saved = Text(f"\u00b7 {what}", style=style)

    # -------------------------------------------------------------- note, flag

    def has_current(self) -> bool:
        raise NotImplementedError

    def action_note(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        from copal_tui.tui.screens.label_note import NoteScreen

        self.app.push_screen(NoteScreen(self.NOTE_TITLE), self.save_note)

    def action_flag(self) -> None:
        if not self.has_current():
            self.app.bell()
            return
        from copal_tui.tui.screens.label_flag import FlagScreen

        self.app.push_screen(FlagScreen(), self.save_flag)

    def save_note(self, text: str | None) -> None:
        raise NotImplementedError

    def save_flag(self, reason: str | None) -> None:
        raise NotImplementedError
