"""SQL of `copal traffic cases`, the pairs behind a traffic figure: where each pair came from
(its source, file line and transcript turn) with the start of its de-identified query, for the
pairs a human reference label counts; and an automatic labeller's usable predictions over the
whole log, narrowed to one cell of Table 11 in SQL (a million pairs are never read to list a
few). The pairs in scope are those `store.report.traffic.report_rows` counts: text not purged,
the log linked to a world in scope (every pair when no world is named).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from store.db import Database
from store.report.scope import world_scope
from store.report.traffic import USABLE

# How much of a query a listing shows: enough to recognise the pair, not its whole text.
QUERY_START = 80


@dataclass(frozen=True, slots=True)
class PairHead:
    """A pair as a listing names it; `turn` is None for a pair read from a pairs log (a
    transcript's assistant turn otherwise)."""

    pair: str
    source: str
    line: int
    turn: int | None
    query: str  # the first QUERY_START characters of the de-identified query


@dataclass(frozen=True, slots=True)
class JudgedPair:
    """A pair with the labeller's usable prediction on it."""

    head: PairHead
    category: str
    erroneous: bool


_HEAD = f"p.id, p.source, p.line, p.turn, substr(COALESCE(p.query, ''), 1, {QUERY_START})"


def _head(row: Sequence[object]) -> PairHead:
    pid, source, line, turn, query = row[:5]
    return PairHead(str(pid), str(source), int(str(line)),
                    None if turn is None else int(str(turn)), str(query))


def heads(db: Database, pairs: Sequence[str]) -> dict[str, PairHead]:
    """The heads of `pairs` (ids; one JSON parameter, so any number fits one statement)."""
    return {h.pair: h for h in map(_head, db.tuples(
        f"SELECT {_HEAD} FROM traffic_pairs p WHERE p.id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(pairs)),)))}


def judged(db: Database, judge: str, worlds: Sequence[str], *, source: str | None = None,
           category: str | None = None, erroneous: bool | None = None
           ) -> Iterator[JudgedPair]:
    """`judge`'s usable predictions on the pairs in scope, in one source, category and verdict
    when given (None: every one), by source, line and turn: read as they are consumed (a
    whole-log cell is the whole log), inside the caller's transaction."""
    where, scoped = world_scope(list(worlds), "p.world_id")
    params: list[object] = [judge, *scoped]
    for column, value in (("p.source", source), ("j.category", category),
                          ("j.erroneous", None if erroneous is None else int(erroneous))):
        if value is not None:
            where += f" AND {column} = ?"
            params.append(value)
    for r in db.tuples(
            f"SELECT {_HEAD}, j.category, j.erroneous FROM traffic_judgments j "
            f"JOIN traffic_pairs p ON p.id = j.pair_id WHERE j.judge = ? AND {USABLE} "
            f"AND p.purged_at IS NULL{where} ORDER BY p.source, p.line, p.turn, p.id", params):
        yield JudgedPair(_head(r), str(r[5]), bool(r[6]))
