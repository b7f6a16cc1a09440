"""Untrusted text (policies, queries, model responses) made safe to show in a terminal.

Shown literally: never parsed as Rich markup (callers build `Text` objects, not markup strings).
The characters themselves go through `copal_tui.domain.safe_text.visible` with `collapse`: a
short terminated escape sequence (colour, window title, hyperlink) is replaced by one ␛ so the
annotator sees that something was there; a lone ESC, an unterminated OSC/DCS or a long one is
shown in full with ␛ for the ESC, so nothing after it is ever hidden; other controls are shown
as Control Pictures (␇, ␍), and bidi, zero-width and tag characters as `⟦U+XXXX⟧`, so a
response cannot repaint the screen, set the window title, smuggle a hyperlink, reorder what the
annotator reads or hide a word.
"""

from __future__ import annotations

from rich.text import Text

from copal_tui.domain.safe_text import visible


def clean(text: str | None) -> str:
    """The text with escape sequences and every control or invisible character made visible."""
    return visible(text, collapse=True)


def safe(text: str | None, style: str = "") -> Text:
    """A Rich Text that shows `text` literally (square brackets are not markup)."""
    return Text(clean(text), style=style)


def one_line(text: str | None, width: int = 80) -> str:
    """Clean, single-line, truncated: for table cells."""
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "\u2026"
