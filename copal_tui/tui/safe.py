"""Untrusted text (policies, queries, model responses) made safe to show in a terminal, and never
more of it at once than a screen can lay out.

Shown literally: never parsed as Rich markup (callers build `Text` objects, not markup strings).
The characters themselves go through `copal_tui.domain.safe_text.visible` with `collapse`: a
short terminated escape sequence (colour, window title, hyperlink) is replaced by one ␛ so the
annotator sees that something was there; a lone ESC, an unterminated OSC/DCS or a long one is
shown in full with ␛ for the ESC, so nothing after it is ever hidden; other controls are shown
as Control Pictures (␇, ␍), and bidi, zero-width and tag characters as `⟦U+XXXX⟧`, so a
response cannot repaint the screen, set the window title, smuggle a hyperlink, reorder what the
annotator reads or hide a word.

Bounded: Rich wraps a text again on every layout, in time that grows faster than its length (a
10 MB response held the label queue for minutes), so no text is cleaned or laid out past its
first `SHOWN` characters; a longer one ends with a line saying how much is left out. The screens
that show a response whole read it in parts of `SHOWN` instead (widgets/long_text.py), and a
part is never cut. What cleaning makes of a part is bounded too (`SHOWN_OUT`): an invisible
character is shown as eight.
"""

from __future__ import annotations

from rich.text import Text

from copal_tui.domain.safe_text import visible

SHOWN = 16_384  # characters of one text a screen lays out (bytes: a part read from the store)
SHOWN_OUT = 2 * SHOWN  # characters of cleaned text, at most, for those SHOWN


def clean(text: str | None) -> str:
    """The text with escape sequences and every control or invisible character made visible:
    its first `SHOWN` characters, and a last line saying how many more there are."""
    raw = _text(text)
    out = visible(raw[:SHOWN], collapse=True)
    if len(out) > SHOWN_OUT:
        return out[:SHOWN_OUT] + ("\n[\u2026 the rest is not shown: its escapes and invisible "
                                  "characters would not fit]")
    if len(raw) > SHOWN:
        return out + f"\n[\u2026 {len(raw) - SHOWN:,} more characters not shown]"
    return out


def safe(text: str | None, style: str = "") -> Text:
    """A Rich Text that shows `text` literally (square brackets are not markup), bounded as
    `clean` bounds it."""
    return Text(clean(text), style=style)


def one_line(text: str | None, width: int = 80) -> str:
    """Clean, single-line, truncated: for table cells. Only the start of a long text is
    cleaned: enough for `width` once blanks are squeezed and sequences collapsed."""
    raw = _text(text)
    head = raw[:width * 4 + 256]
    flat = " ".join(visible(head, collapse=True).split())
    if len(flat) <= width and len(head) == len(raw):
        return flat
    return flat[: max(0, width - 1)] + "\u2026"


def _text(value: object) -> str:
    # Stored values are typed, but a column may hold a number where text is expected.
    return "" if value is None else value if isinstance(value, str) else str(value)
