"""The store's errors, which every layer above may catch: the user can act on each (shown as one
line, never a traceback)."""

from __future__ import annotations


class StoreError(Exception):
    """A problem with the database that the user can act on (shown as one line)."""


class OverBudget(StoreError):
    """Reads run under `Database.within` that did not finish in their time budget."""


class StoreRefused(StoreError):
    """A file copal will not open as asked: empty, not SQLite, not copal's, written by a newer
    copal, or read-only for a command that writes. Bad input rather than a failure (exit 2)."""
