"""Text from data or a provider made safe to show on a terminal; no UI library is imported.

Policies, queries, model responses, model and judge names and provider error bodies are
untrusted: a string carrying `ESC ] 2 ; ... BEL` retitles the terminal, `ESC [ 2 J` clears
it, a bidi override reorders what is read, a zero-width or tag character hides text. Every
screen (the TUI through `copal_tui.tui.safe`, every CLI command through
`copal_tui.commands.output`) shows data only after `visible`. One convention everywhere:

- C0 controls other than newline and tab, and DEL, become their Control Pictures: ESC is
  shown as U+241B (␛), BEL as ␇, NUL as ␀, a lone CR as ␍, DEL as ␡. CRLF becomes LF.
- Every other invisible or reordering character is shown as its code point, `⟦U+XXXX⟧`:
  the C1 controls (8-bit CSI, OSC, ...), bidi embeddings, overrides, isolates and marks,
  zero-width characters, line and paragraph separators, Unicode tag characters,
  supplementary variation selectors (a known way to hide a payload), lone surrogates.
- Nothing is dropped: an escape sequence stays readable but inert (`␛]2;title␇`), and an
  unterminated one cannot swallow the text after it. With `collapse` (the TUI), a short,
  one-line, terminated sequence is replaced by a single ␛ so an annotator reads the prose,
  not colour codes, yet sees that something was there; a long or multi-line one is shown in
  full, so a "sequence" can never hide a paragraph of the response.

`json_text` is the counterpart for JSON printed on stdout: the same characters escaped as
`\\uXXXX`, so the document stays valid and means exactly the same.
"""

from __future__ import annotations

import re

# Invisible or reordering characters beyond the C0/C1 controls. Ranges, not a Unicode
# category lookup, so the set is explicit and does not move with the Python version.
_INVISIBLE = (
    "\u061c"  # Arabic letter mark (bidi)
    "\u180e"  # Mongolian vowel separator (zero width)
    "\u200b-\u200f"  # zero-width space, non-joiner, joiner; LRM, RLM
    "\u2028-\u202e"  # line/paragraph separators; bidi embeddings and overrides
    "\u2060-\u2064"  # word joiner, invisible operators
    "\u2066-\u206f"  # bidi isolates, deprecated format characters
    "\ufeff"  # zero-width no-break space (BOM)
    "\ufff9-\ufffb"  # interlinear annotation (hides the annotated text in some renderers)
    "\U0001bca0-\U0001bca3"  # shorthand format controls
    "\U0001d173-\U0001d17a"  # musical symbol format controls
    "\U000e0000-\U000e007f"  # tag characters
    "\U000e0100-\U000e01ef"  # variation selectors supplement
    "\ud800-\udfff"  # lone surrogates (also unprintable: UTF-8 cannot encode them)
)
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but newline and tab, DEL, C1

_CHAR = f"[{_CONTROL}{_INVISIBLE}]"
_UNSAFE = re.compile(f"\r\n|{_CHAR}")

# Terminated sequences the TUI may collapse: bounded and on one line (see the docstring).
# CSI; OSC ended by BEL or ST; DCS, SOS, PM, APC ended by ST. 7-bit and 8-bit introducers.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]{0,32}[ -/]{0,8}[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]{0,256}(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c\n]{0,256}(?:\x1b\\|\x9c)"
)
_COLLAPSIBLE = re.compile(f"(?P<seq>{_SEQUENCE})|\r\n|{_CHAR}")

ESC_MARK = "\u241b"  # ␛: where an escape sequence was (and what a lone ESC is shown as)

# JSON text: C0 controls are already escaped by json.dumps; the rest are not with
# ensure_ascii=False. Newline, tab and CR outside strings are JSON whitespace: left alone.
_JSON_UNSAFE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_INVISIBLE}]")


def mark(ch: str) -> str:
    """The visible stand-in of one unsafe character."""
    cp = ord(ch)
    if cp < 0x20:
        return chr(0x2400 + cp)  # Control Pictures: ␀ .. ␟, in code point order
    if cp == 0x7F:
        return "\u2421"  # ␡
    return f"\u27e6U+{cp:04X}\u27e7"


def visible(text: object, *, collapse: bool = False, keep_crlf: bool = False) -> str:
    """`text` with every control and invisible character shown, nothing dropped.

    `collapse`: a short terminated escape sequence becomes one ␛ (the TUI's reading view).
    `keep_crlf`: CRLF stays CRLF (a terminal treats it as a newline; CSV on stdout uses it);
    otherwise CRLF becomes LF. A lone CR is always shown as ␍."""
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    newline = "\r\n" if keep_crlf else "\n"

    def sub(m: re.Match[str]) -> str:
        found = m.group()
        if found == "\r\n":
            return newline
        if m.lastgroup == "seq":  # a whole terminated sequence (only with collapse)
            return ESC_MARK
        return mark(found)

    return (_COLLAPSIBLE if collapse else _UNSAFE).sub(sub, s)


def _json_escape(m: re.Match[str]) -> str:
    cp = ord(m.group())
    if cp > 0xFFFF:  # JSON escapes name UTF-16 units: a surrogate pair
        cp -= 0x10000
        return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"
    return f"\\u{cp:04x}"


def json_text(text: str) -> str:
    """JSON text (as json.dumps writes it) with the unsafe characters escaped as \\uXXXX.

    Outside strings JSON is ASCII, so every such character is inside a string, where the
    escape means the same character: json.loads gives back exactly the same value."""
    return _JSON_UNSAFE.sub(_json_escape, text)
