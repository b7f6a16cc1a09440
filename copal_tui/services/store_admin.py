"""The store commands' database work: schema migrations, counts (`copal stats`), the online
backup, CompliBench imports as one transaction, and the demo's summary reads.

`store.migrations.apply` loads sqlite-utils (~0.25 s), so it is imported inside the functions that
migrate: only the commands that migrate pay for it, not every start of the CLI or the TUI.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from copal_tui.services import reading

# The demo summary's rows are the store's typed rows, re-exported for the commands.
from store.artifacts.records import AlignedCount as AlignedCount
from store.artifacts.records import ModelErrors as ModelErrors
from store.db import Database


def pending(db: Database) -> list[str]:
    """The migrations not applied yet, in order."""
    from store.migrations import apply

    return apply.pending(db)


def migrate(db: Database) -> list[str]:
    """Apply the pending migrations (each its own transaction); the ones applied."""
    from store.migrations import apply

    return apply.migrate(db)


def stats(db: Database) -> dict[str, int | float | str | None]:
    """Counts of everything in the store, by what is counted (one snapshot), clauses per
    policy rule beside the paper's (`_per_rule`), the selected composed suite's
    relation-pattern mix beside the paper's (`selection.mix_line`), and the traffic pairs with
    what de-identification removed from them (`_traffic`)."""
    from store.artifacts import reads

    with reading(db):
        return {**_per_rule(reads.stats(db)), "selected_pattern_mix": _selected_mix(db),
                **_traffic(db)}


def _traffic(db: Database) -> dict[str, int]:
    """The real-traffic audit's pairs (stored, and purged for good) and what de-identification
    removed from them, by source and type (`redacted:<source>:<TYPE>`)."""
    from store.artifacts import traffic

    pairs, purged = traffic.pair_counts(db)
    return {"traffic_pairs": pairs, "traffic_pairs_purged": purged,
            **{f"redacted:{source}:{kind}": n
               for source, kinds in traffic.redaction_counts(db).items()
               for kind, n in kinds.items()}}


def _per_rule(counts: dict[str, int]) -> dict[str, int | float | None]:
    """The counts with `clauses_per_rule` (clauses / policy_rules) after `policy_rules`, and
    the paper's figures (`paper_*`: 480 clauses of 882 rules) at the end."""
    from copal_tui.domain.grounding import paper_counts, per_rule

    out: dict[str, int | float | None] = {}
    for key, n in counts.items():
        out[key] = n
        if key == "policy_rules":
            out["clauses_per_rule"] = per_rule(counts["clauses"], n)
    return {**out, **paper_counts()}


def _selected_mix(db: Database) -> str:
    from collections import Counter

    from copal_tui.domain.selection import mix_line
    from store.pipeline import todo

    selected = Counter(str(i.pattern) for w in todo.worlds(db, None)
                       for i in todo.items(db, w.id, method="copal", selected=True,
                                                   parent=False))
    return mix_line(selected)


def backup(db: Database, dest: Path) -> str:
    """Copy the database into the file `dest` through SQLite's online backup API (consistent
    while others write); the copy's `PRAGMA quick_check` answer ("ok" when sound)."""
    out = sqlite3.connect(str(dest))
    try:
        db.conn.backup(out)
        return str(out.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        out.close()


# ------------------------------------------------------------------ the demo's summary


def error_summary(db: Database, judge: str, mode: str) -> list[ModelErrors]:
    from store.artifacts import reads

    with reading(db):
        return reads.error_summary(db, judge, mode)


def pas_summary(db: Database, judge: str) -> list[AlignedCount]:
    from store.artifacts import reads

    with reading(db):
        return reads.pas_summary(db, judge)
