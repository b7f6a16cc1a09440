"""What the CLI prints: every line, document and table that may carry data goes through here.

Strings from the store or a provider (model and judge names, policy text, queries, error
bodies) are untrusted; `copal_tui.domain.safe_text` shows their control and invisible
characters visibly (ESC as ␛, bidi and zero-width characters as ⟦U+XXXX⟧) before they reach
stdout or stderr. Always, not only on a terminal: a pipe into `less -R` or a later `cat` of a
redirected file reaches a terminal too. Files written with an explicit `--out` are not made
here and keep the data exactly.

Tables fit the terminal's width (`copal_tui.export.fit_table`): no cell is elided and no number
is broken across lines, at 80 columns too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO, Any, cast

import click

from copal_tui.domain.safe_text import json_text, visible


def echo(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """click.echo of `text` made safe (CRLF kept: a terminal reads it as a newline)."""
    click.echo(visible(text, keep_crlf=True), err=err, nl=nl)


def write_document(text: str) -> None:
    """A rendered document (Markdown, CSV, LaTeX) on stdout, byte for byte but made safe."""
    sys.stdout.write(visible(text, keep_crlf=True))


def write_json(text: str) -> None:
    """JSON text on stdout with C1, bidi, zero-width and tag characters escaped as \\uXXXX
    (json.dumps escapes the C0 controls itself): still valid JSON, the same values."""
    sys.stdout.write(json_text(text))


class _JsonStdout:
    """A write-only text stream over stdout that escapes like `write_json`, chunk by chunk
    (each chunk a whole JSON text or whitespace, as the JSONL writer emits them)."""

    def write(self, chunk: str) -> int:
        sys.stdout.write(json_text(chunk))
        return len(chunk)

    def flush(self) -> None:
        sys.stdout.flush()


def json_stdout() -> IO[str]:
    """stdout for a writer that takes a stream of JSON texts (JSON Lines)."""
    return cast(IO[str], _JsonStdout())


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *,
                title: str | None = None, right: Sequence[str] = (), keys: int = 1,
                whole: Sequence[str] = (), note: str = "", wide: bool = False,
                stacked_hint: str = "") -> str:
    """A table of safe text (never markup, never escapes) that fits the terminal: see
    `copal_tui.export.fit_table` (columns named in `right` are numbers, those in `whole`
    are never wrapped either; the first `keys` columns name a row; `wide`: one line per row
    whatever the terminal's width). Returns the layout used ("table", "abbreviated" or
    "stacked")."""
    from copal_tui.export.fit_table import print_table as fitted
    from copal_tui.export.fit_table import terminal_console

    return fitted(terminal_console(), headers, rows, title=title,
                  numeric={i for i, h in enumerate(headers) if h in right}, keys=keys,
                  whole={i for i, h in enumerate(headers) if h in whole}, note=note, wide=wide, stacked_hint=stacked_hint)
