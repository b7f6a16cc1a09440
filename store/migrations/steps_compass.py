"""Migration m015: the allowlist policy of an allowed-edge COMPASS query as its own column.

Append-only: never edit a step once it has landed on main; add a new one (see the list in
`store.migrations`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec


@migration
def m015_compass_allowlist_policy(db: Database) -> None:
    # The public COMPASS code files an allowed-edge rewrite under its parent's denylist policy
    # (`policy`) and keeps the allowlist policy it was written for beside it; copal files it
    # the same way, so the allowlist policy needs a column of its own. Every allowed-edge row
    # written before was filed under its allowlist policy: it keeps its filing and gets that
    # policy in the new column. Other query types leave it NULL.
    _exec(
        db,
        """
        ALTER TABLE compass_queries ADD COLUMN allowlist_policy_id TEXT;
        UPDATE compass_queries SET allowlist_policy_id = policy_id
            WHERE query_type = 'allowed_edge';
        """,
    )
