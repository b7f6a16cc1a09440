"""What the dialogues' rows say of their provenance besides their runs (the suite's
`Report.provenance` read): the judge attempts no run wrote (imported from files). Dialogues
belong to no world, so a report's world scope leaves them whole."""

from __future__ import annotations

from copal_tui.domain.report_rows import SuiteExtras
from store.db import Database


def extras(db: Database, worlds: list[str] | None) -> SuiteExtras:
    n = db.execute("SELECT COUNT(*) FROM dialogue_attempts WHERE run_id IS NULL").fetchone()[0]
    return SuiteExtras({}, {"judge attempts": int(n)})
