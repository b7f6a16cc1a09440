"""What COMPASS's rows in scope say of their provenance besides their runs (the suite's
`Report.provenance` read): the pre-filter models its responses name (a chatbot variant's model,
which the responding run records only as an option), and the queries and judgments no run
wrote (imported from files)."""

from __future__ import annotations

from copal_tui.domain.report_rows import SuiteExtras
from store.db import Database
from store.report.scope import all_rows, world_scope


def extras(db: Database, worlds: list[str] | None) -> SuiteExtras:
    q_where, q_params = world_scope(worlds, "q.world_id")
    prefilters = [r[0] for r in all_rows(
        db, f"SELECT DISTINCT r.prefilter_model FROM compass_responses r JOIN compass_queries q "
            f"ON q.id = r.query_id WHERE r.prefilter_model IS NOT NULL{q_where} ORDER BY 1",
        q_params)]
    judgments = ("compass_judgments j JOIN compass_responses r ON r.id = j.response_id "
                 "JOIN compass_queries q ON q.id = r.query_id" if worlds else "compass_judgments j")
    counts = {
        "queries": f"SELECT COUNT(*) FROM compass_queries q WHERE q.run_id IS NULL{q_where}",
        "judgments": f"SELECT COUNT(*) FROM {judgments} WHERE j.run_id IS NULL{q_where}",
    }
    return SuiteExtras({"prefilter": prefilters},
                       {what: int(db.execute(sql, q_params).fetchone()[0])
                        for what, sql in counts.items()})
