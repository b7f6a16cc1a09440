"""What the CLI prints: every line, document and table that may carry data goes through here.

Strings from the store or a provider (model and judge names, policy text, queries, error
bodies) are untrusted; `copal_tui.domain.safe_text` shows their control and invisible
characters visibly (ESC as ␛, bidi and zero-width characters as ⟦U+XXXX⟧) before they reach
stdout or stderr. Always, not only on a terminal: a pipe into `less -R` or a later `cat` of a
redirected file reaches a terminal too. Files written with an explicit `--out` are not made
here and keep the data exactly.
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
                title: str | None = None, right: Sequence[str] = ()) -> None:
    """A rich table whose every cell is a Text of safe text: never markup, never escapes."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(visible(title)) if title is not None else None)
    for h in headers:
        table.add_column(Text(visible(h)), justify="right" if h in right else "left")
    for row in rows:
        table.add_row(*(Text(visible("" if c is None else c)) for c in row))
    Console().print(table)
