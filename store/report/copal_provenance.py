"""What COPAL's rows in scope say of their provenance besides their runs (the suite's
`Report.provenance` read): the items and judgments no run wrote (imported from files)."""

from __future__ import annotations

from copal_tui.domain.report_rows import SuiteExtras
from store.db import Database
from store.report.provenance import judgments_in_scope
from store.report.scope import world_scope


def extras(db: Database, worlds: list[str] | None) -> SuiteExtras:
    i_where, i_params = world_scope(worlds, "i.world_id")
    counts = {
        "items": f"SELECT COUNT(*) FROM items i WHERE i.run_id IS NULL{i_where}",
        "judgments": f"SELECT COUNT(*) FROM {judgments_in_scope(worlds)} WHERE j.run_id IS "
                     f"NULL{i_where}",
    }
    return SuiteExtras({}, {what: int(db.execute(sql, i_params).fetchone()[0])
                            for what, sql in counts.items()})
