"""What the traffic suite does with its stored pairs besides importing them: the imports'
record, and purging pairs' text for good.

A pair an annotator flagged as still holding sensitive content (a current label with
`sensitive: true`) leaves the figures and the exports' text at once; `purge` removes its text
from the store for good (the paper's "further redacted or excluded"): the row, its counts and
its labels stay, so the figures can still say how many pairs were excluded and why.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.artifacts import traffic
from store.artifacts.traffic import ImportRow
from store.db import Database, StoreError, write


def imports(db: Database) -> list[ImportRow]:
    return traffic.imports(db)


def flagged(db: Database) -> list[str]:
    """Pairs whose current label, by any annotator or an adjudicator, flags sensitive
    content, and whose text is still stored."""
    return traffic.flagged_sensitive(db)


def purge_targets(db: Database, *, flagged: bool, pairs: Sequence[str]) -> list[str]:
    """The pairs to purge: the flagged ones and those named; StoreError for a named pair that
    is not stored."""
    chosen = dict.fromkeys(traffic.flagged_sensitive(db) if flagged else [])
    for pid in pairs:
        found = traffic.pair(db, pid)
        if found is None:
            raise StoreError(f"unknown traffic pair {pid!r}")
        if found.purged_at is None:
            chosen[pid] = None
    return list(chosen)


def purge(db: Database, pair_ids: Sequence[str]) -> int:
    with write(db):
        return traffic.purge(db, pair_ids)
