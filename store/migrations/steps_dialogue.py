"""Migration m013: how a dialogue judge's answer was read.

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
def m013_dialogue_judge_parsing(db: Database) -> None:
    # A judge attempt's answer is read as CompliBench reads it (copal_tui.domain.dialogue:
    # read_judge_answer), after copal's one repair round. An attempt records whether its
    # predictions come from the repair round (`repaired`), whether no verdict could be read even
    # then (`unparsed`: scored with no predictions, every turn wrong; not a failure), and the
    # first answer's text when CompliBench's parser, which has no repair round, reads it
    # differently from what was stored (`first_answer`), so the report can say what the first
    # answers alone would have scored. Rows written before are left as they were (0, 0, NULL).
    _exec(
        db,
        """
        ALTER TABLE dialogue_attempts ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0
            CHECK (repaired IN (0, 1));
        ALTER TABLE dialogue_attempts ADD COLUMN unparsed INTEGER NOT NULL DEFAULT 0
            CHECK (unparsed IN (0, 1));
        ALTER TABLE dialogue_attempts ADD COLUMN first_answer TEXT;
        """,
    )
