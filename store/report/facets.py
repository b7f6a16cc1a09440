"""The human side of the report's `observed_facets` section: the labels and decisions on the
composed suite's responses with their observed and target facets. (The judges' observed facets
come with the judgments' bulk read, `store.report.coded.judgment_codes`.)

The composed suite is the selected COPAL items (method 'copal', selected, no parent): the items
whose target facet is a construction label of the suite. The query is limited to it and to the
worlds in scope, and ordered, so the same database gives the same rows. Observed facets are read
as stored (a label's from its payload); the metrics layer applies the rules
(`copal_tui.metrics.facets`).
"""

from __future__ import annotations

from copal_tui.domain.report_rows import FACETS, HumanVotes, Vote
from store.annotation.annotations import CURRENT, CURRENT_DECISION
from store.db import Database
from store.report.scope import ERROR, all_rows, world_scope

_COMPOSED = "i.method = 'copal' AND i.selected = 1 AND i.parent_item_id IS NULL"
# A COPAL label's (or decision's) observed facet, from its payload in the annotation log.
_FACET = "json_extract(e.payload, '$.facet')"


def human_votes(db: Database, worlds: list[str] | None) -> HumanVotes:
    """The current labels and the current decisions on responses to composed items in scope,
    each as (response rowid, annotator, error, observed facet, target facet)."""
    where, params = world_scope(worlds, "i.world_id")

    def votes(rule: str) -> list[Vote]:
        return [Vote(int(r[0]), str(r[1]), int(r[2]), r[3], r[4]) for r in all_rows(
            db,
            f"SELECT r.rowid, e.annotator, {ERROR}, {_FACET}, i.facet FROM annotations e "
            "JOIN responses r ON r.id = e.subject JOIN items i ON i.id = r.item_id "
            f"WHERE e.suite = 'copal' AND {rule} AND {ERROR} IS NOT NULL "
            f"AND {_COMPOSED}{where} ORDER BY e.subject, e.annotator",
            params)]

    return HumanVotes(votes(CURRENT), votes(CURRENT_DECISION))


def other_facets(db: Database, judge: str, mode: str) -> dict[int, str]:
    """{response rowid: stored facet} of the setting's error judgments whose facet is not a
    facet's exact value (`store.report.coded.judgment_codes` codes them OTHER_FACET without the
    name; they are rare, so they are read only when there are some)."""
    names = ", ".join("?" * len(FACETS))
    return {int(r[0]): str(r[1]) for r in all_rows(
        db,
        "SELECT r.rowid, j.facet FROM judgments j JOIN responses r ON r.id = j.response_id "
        "WHERE j.judge = ? AND j.mode = ? AND j.error = 1 AND j.facet IS NOT NULL "
        f"AND j.facet NOT IN ({names})",
        (judge, mode, *FACETS))}
