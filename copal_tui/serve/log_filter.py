"""What `copal serve` prints about requests: no token, however spelt, and no raw control text.

aiohttp's access log prints each request line with its query string (and the Referer and
User-Agent headers), and a user's first request carries the token. A query name is matched
after percent-decoding (aiohttp decodes it before the guard reads it, so `tok%65n=` is a token)
and regardless of case or punctuation (`TOKEN=` is refused, yet the value is often a real token
pasted wrong). In any word of a log line (a request target, a Referer) whose decoded letters
spell "token", each query parameter that does loses its value (`/?fontsize=9&tok%65n=...` is
printed as `/?fontsize=9&tok%65n=<redacted>`), or the whole parameter when its name may hold
more than the name; a word that spells it outside a query is replaced whole. What remains goes
through the one terminal sanitiser, since a header can carry bidi overrides and 8-bit control
characters.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from urllib.parse import unquote_plus

from copal_tui.domain.safe_text import visible

REDACTED = "<redacted>"
# A word of a log line: a request target, a Referer URL, a header's word (quotes delimit them
# in aiohttp's format).
_WORD = re.compile(r"[^\s\"']+")
_PAIR = re.compile(r"[^&;]+")
_NOT_LETTER = re.compile(r"[^a-z]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Nested percent-encoding (`%2574`) is decoded one level per round; a few rounds cover any
# spelling a server along the way would decode.
_DECODE_ROUNDS = 4


def _normal(text: str) -> str:
    """`text` fully percent-decoded, NFKC-normalised and case-folded."""
    for _ in range(_DECODE_ROUNDS):
        decoded = unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return unicodedata.normalize("NFKC", text).casefold()


def _mentions_token(text: str) -> bool:
    return "token" in _NOT_LETTER.sub("", _normal(text))


def _redact_pair(match: re.Match[str]) -> str:
    pair = match.group()
    if not _mentions_token(pair):
        return pair
    name, equals, _ = pair.partition("=")
    # A name that is only a spelling of "token" (or no spelling of it) is kept: the value is the
    # secret. A name with more in it (`token%3DSECRET=`) may hold the secret itself.
    if equals and (_NOT_ALNUM.sub("", _normal(name)) == "token" or not _mentions_token(name)):
        return f"{name}={REDACTED}"
    return REDACTED


def _redact_word(match: re.Match[str]) -> str:
    word = match.group()
    if not _mentions_token(word):
        return word
    path, question, query = word.partition("?")
    if not question or _mentions_token(path):
        return REDACTED
    return f"{path}?{_PAIR.sub(_redact_pair, query)}"


def redact(text: str) -> str:
    """`text` with no token left in it (see the module docstring), made safe for a terminal."""
    return visible(_WORD.sub(_redact_word, text))


class RedactTokens(logging.Filter):
    """Applies `redact` to a record's message and to the request fields aiohttp adds to it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        line = getattr(record, "first_request_line", None)
        if isinstance(line, str):
            record.first_request_line = redact(line)
        headers = getattr(record, "request_header", None)
        if isinstance(headers, dict):
            record.request_header = {k: redact(str(v)) for k, v in headers.items()}
        return True
