"""A vertical scroll pane whose keys only scroll vertically.

Textual's scroll containers also bind left/right; in the marking screens those keys move between
responses, so the panes there drop the inherited bindings and keep up/down/page/home/end.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll


class ScrollPane(VerticalScroll, can_focus=True, inherit_bindings=False):
    BINDINGS = [
        Binding("up", "scroll_up", "scroll up", show=False, id="pane.up"),
        Binding("down", "scroll_down", "scroll down", show=False, id="pane.down"),
        Binding("pageup", "page_up", "page up", show=False, id="pane.page_up"),
        Binding("pagedown", "page_down", "page down", show=False, id="pane.page_down"),
        Binding("home", "scroll_home", "top", show=False, id="pane.home"),
        Binding("end", "scroll_end", "bottom", show=False, id="pane.end"),
    ]
