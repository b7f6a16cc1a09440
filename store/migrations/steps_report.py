"""Migration m012: the indexes `copal report` reads instead of the judgments and responses tables.

Listed in `store.migrations` after m011. Append-only like the others: never edit it once it
has landed, add a new step.

The report reads every judgment once (`store.report.reads.judgment_codes`): its response,
setting, verdict, direction, observed facet and failure. With only the (response_id, judge,
mode) index each judgment's row was fetched from the table, whose long text columns (marks,
evidence, rationale) are most of the file: `idx_judgments_report` holds every column that read
needs, so it never touches the table. The responses without an answer (a failure or no text)
were found by a scan of the whole responses table, texts included; `idx_responses_unanswered`
is a partial index of those rows only, usually empty. The measurements are in BENCHMARKS.md
("`copal report --json` at scale").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

from store.migrations.registry import migration
from store.migrations.script import run_script as _exec


@migration
def m012_report_indexes(db: Database) -> None:
    _exec(db, """
        CREATE INDEX idx_judgments_report
            ON judgments(response_id, judge, mode, error, direction, facet, failure);
        CREATE INDEX idx_responses_unanswered ON responses(id)
            WHERE failure IS NOT NULL OR text IS NULL;
    """)
