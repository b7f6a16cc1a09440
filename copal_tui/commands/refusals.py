"""How a command reports an output path it refuses to write (`OutputRefused`, from the guard
in copal_tui.export.safe_paths): one line on stderr and exit status 2, never a traceback.

Here, with the commands, so that the guard (used by the app, the importers and the services
as well) loads no CLI library.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from copal_tui.export.safe_paths import OutputRefused


@contextmanager
def refusals_exit_2() -> Iterator[None]:
    """In a command: `OutputRefused` becomes one line on stderr and exit status 2."""
    try:
        yield
    except OutputRefused as exc:
        click.echo(f"copal: error: {exc}", err=True)
        raise click.exceptions.Exit(2) from exc
