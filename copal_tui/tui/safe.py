"""Untrusted text (policies, queries, model responses) made safe to show in a terminal.

Shown literally: never parsed as Rich markup (callers build `Text` objects, not markup strings),
with ANSI/OSC/DCS escape sequences and other control characters removed and bidirectional
override characters replaced by a visible marker, so a response cannot repaint the screen,
set the window title, smuggle a hyperlink or reorder what the annotator reads.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC (ESC P|X|^|_ ... ST),
# and two-character escapes (ESC + one char). The 8-bit C1 forms too (\x9b CSI, \x9d OSC).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)"
    r"|\x1b[@-Z\\-_]?",
    re.DOTALL,
)
# Control characters other than newline and tab (C0, DEL, C1).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_BIDI_MAP = {ord(c): f"\u27e6U+{ord(c):04X}\u27e7" for c in _BIDI}


def clean(text: str | None) -> str:
    """The text with escapes and controls removed and bidi controls made visible."""
    if not text:
        return ""
    out = _ESCAPES.sub("", text)
    out = _CONTROLS.sub("", out.replace("\r\n", "\n").replace("\r", "\n"))
    return out.translate(_BIDI_MAP)


def safe(text: str | None, style: str = "") -> Text:
    """A Rich Text that shows `text` literally (square brackets are not markup)."""
    return Text(clean(text), style=style)


def one_line(text: str | None, width: int = 80) -> str:
    """Clean, single-line, truncated: for table cells."""
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "\u2026"
