"""The keys screen: every binding active on the screen below it (the focused widget's, the
screen's, the app's), hidden ones included, with the keys as remapped by the keymap and the
binding id to remap them with (on a labelling screen the keys every queue shares come first,
once, then the queue's own); the screen's own note (its `HELP_TEXT`, e.g. what the COMPASS
label queue keeps hidden); plus how list filters are written."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from copal_tui.tui.widgets.footer import Footer

FILTER_HELP = (
    "Lists: type in the filter line (/ focuses it). Words match any text column; key:value "
    "narrows a column (facet:over_refusal selected:yes, key:\"two words\"); a wrong key says "
    "which keys the list knows. Enter applies the filter and returns to the rows; [ and ] "
    "move between pages of rows."
)


def _where(node: Any, screen: Screen[Any], ident: str | None = None) -> str:
    if node is screen.app:
        return "everywhere"
    if node is screen:
        from copal_tui.tui.screens.label_base import COMMON_IDS

        # A labelling screen: the keys every queue shares, then this queue's own.
        if ident in COMMON_IDS:
            return "every queue"
        suite = getattr(screen, "SUITE_KEYS", ("", ""))
        if suite[0] and (ident or "").startswith(suite[0]):
            return "this queue"
        return "this screen"
    return getattr(node, "HELP_GROUP", None) or type(node).__name__.lower()


def binding_rows(screen: Screen[Any]) -> list[tuple[str, str, str, str]]:
    """(where, keys, description, id) for every active binding of `screen`, keys merged per
    binding (a binding on "escape,b" is one row "esc b")."""
    app = screen.app
    rows: dict[tuple[int, str], list[Any]] = {}
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if binding.system:
            continue
        ident = (id(active.node), binding.id or binding.action)
        entry = rows.setdefault(ident, [active.node, [], binding])
        display = app.get_key_display(Binding(key, binding.action, key_display=None))
        if display not in entry[1]:
            entry[1].append(display)
    out = [(_where(node, screen, binding.id), " ".join(keys),
            binding.description or binding.action, binding.id or "")
           for node, keys, binding in rows.values()]
    # The screen's own keys first (on a labelling screen: the common queue keys once, then
    # the queue's own), then the focused widget's (remappable ones before plain cursor
    # movement), then the app's.
    order = {"every queue": 0, "this queue": 1, "this screen": 2}
    return sorted(out, key=lambda r: (r[0] == "everywhere", order.get(r[0], 3), not r[3]))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,enter,b", "close", "Close", id="help.close")]

    def compose(self) -> ComposeResult:
        stack = [s for s in self.app.screen_stack if s is not self]
        below = stack[-1] if stack else None
        table = Table(expand=True, box=None, header_style="bold", pad_edge=False)
        table.add_column("where", style="dim", no_wrap=True)
        table.add_column("keys", style="bold", no_wrap=True)
        table.add_column("action", ratio=1)
        table.add_column("id (for COPAL_KEYMAP)", style="dim", no_wrap=True)
        if below is not None:
            for where, keys, action, ident in binding_rows(below):
                table.add_row(where, keys, action, ident)
        with VerticalScroll(id="help", classes="panel"):
            yield Static(Text("Keys", style="bold"))
            yield Static(table)
            note = getattr(below, "HELP_TEXT", None)
            if note:
                # A screen's own explanation (what its keys record, what it keeps hidden).
                yield Static(Text("\n" + note))
            yield Static(Text("\n" + FILTER_HELP))
            yield Static(Text(
                "\nEvery action is also in the command palette (ctrl+p). No action needs Esc "
                "alone or a mouse: b goes back where Esc does, q or ? closes this screen. "
                "Remap keys by id: COPAL_KEYMAP='{\"app.help\": \"f1\"}'.", style="dim"))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help").focus()

    def action_close(self) -> None:
        self.app.pop_screen()
