"""The reads behind the report's `observed_facets` section: target and observed facets of the
composed suite's responses, from one judge setting and from the human labels.

The composed suite is the selected COPAL items (method 'copal', selected, no parent): the items
whose target facet is a construction label of the suite. Every query is limited to it and to the
worlds in scope, and ordered, so the same database gives the same rows. Observed facets are read
as stored (a judge's on its usable error judgments; a label's from its payload); the metrics
layer applies the rules (`copal_tui.metrics.facets`).
"""

from __future__ import annotations

from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.db import Database
from store.report.metrics_sql import _all, _scope

_COMPOSED = "i.method = 'copal' AND i.selected = 1 AND i.parent_item_id IS NULL"
# A COPAL label's (or decision's) error and observed facet, from its payload in the event log.
_ERROR = "json_extract(e.payload, '$.error')"
_FACET = "json_extract(e.payload, '$.facet')"

# (response, annotator, error, observed facet, the item's target facet)
Vote = tuple[str, str, int, str | None, str | None]


def target_facets(db: Database, worlds: list[str] | None) -> list[str | None]:
    """The distinct target facets of the composed items in scope (None: an item without one)."""
    where, params = _scope(worlds)
    return [r[0] for r in _all(
        db, f"SELECT DISTINCT i.facet FROM items i WHERE {_COMPOSED}{where} ORDER BY 1",
        params)]


def judge_errors(db: Database, judge: str, mode: str,
                 worlds: list[str] | None) -> list[tuple[str, str | None, str | None]]:
    """(response, target facet, observed facet) of every usable error judgment of the setting
    on a composed item in scope (usable: no failure and an error; see `metrics_sql`)."""
    where, params = _scope(worlds)
    return _all(
        db,
        "SELECT r.id, i.facet, j.facet FROM judgments j "
        "JOIN responses r ON r.id = j.response_id JOIN items i ON i.id = r.item_id "
        "WHERE j.judge = ? AND j.mode = ? AND j.failure IS NULL AND j.error = 1 "
        f"AND {_COMPOSED}{where} ORDER BY r.id",
        (judge, mode, *params),
    )


def human_votes(db: Database, worlds: list[str] | None) -> tuple[list[Vote], list[Vote]]:
    """The current labels and the current decisions on responses to composed items in scope,
    each as (response, annotator, error, observed facet, target facet)."""
    where, params = _scope(worlds)

    def votes(rule: str) -> list[Vote]:
        return [(str(r[0]), str(r[1]), int(r[2]), r[3], r[4]) for r in _all(
            db,
            f"SELECT e.subject, e.annotator, {_ERROR}, {_FACET}, i.facet FROM annotations e "
            "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
            f"WHERE e.suite = 'copal' AND {rule} AND {_ERROR} IS NOT NULL "
            f"AND {_COMPOSED}{where} ORDER BY e.subject, e.annotator",
            params)]

    return votes(CURRENT), votes(CURRENT_DECISION)
