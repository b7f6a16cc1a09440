"""What the CLI prints: every line, document and table that may carry data goes through here.

Strings from the store or a provider (model and judge names, policy text, queries, error
bodies) are untrusted; `copal_tui.domain.safe_text` shows their control and invisible
characters visibly (ESC as ␛, bidi and zero-width characters as ⟦U+XXXX⟧) before they reach
stdout or stderr. Always, not only on a terminal: a pipe into `less -R` or a later `cat` of a
redirected file reaches a terminal too. Files written with an explicit `--out` are not made
here and keep the data exactly.

Tables fit the terminal's width (`copal_tui.export.fit_table`): no cell is elided and no number
is broken across lines, at 80 columns too.

A reader that goes away (`copal export --out - | head`) ends the command quietly with status
141 (128 + SIGPIPE), as it ends a Unix tool: `end_if_stdout_closed`, called by the entry point.
"""

from __future__ import annotations

import os
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


# The status of a process ended by SIGPIPE, as a shell reports it (SIGPIPE is 13 on every
# platform that has one).
CLOSED_PIPE_STATUS = 128 + 13


def stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (its write end polls as an error)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file: a test's buffer, say
        return False
    try:
        import select

        poller = select.poll()
    except (ImportError, AttributeError):  # no poll (Windows): the error was stdout's
        return True
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _fd, events in poller.poll(0))


def end_if_stdout_closed() -> None:
    """After a BrokenPipeError: if stdout's reader has gone, exit quietly with
    CLOSED_PIPE_STATUS; otherwise return (the broken pipe was another one)."""
    if not stdout_closed():
        return
    # What is still buffered would fail again when Python flushes stdout at exit, with a
    # message: it goes nowhere instead.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    sys.exit(CLOSED_PIPE_STATUS)


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
