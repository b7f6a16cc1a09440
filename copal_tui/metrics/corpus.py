"""Corpus profile: what the numbers are computed over (worlds, policies, clauses, compositions,
items by pattern, facet, active clauses and construction method, responses, judgments), and the
selected suite's relation-pattern mix beside the paper's (Table 8: 364, 179, 175 and 182 of its
900 selected composed queries), in the report's pattern order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from copal_tui.domain.selection import PAPER_PATTERN_COUNTS
from copal_tui.domain.taxonomy import Effect
from copal_tui.metrics.classify import ratio
from copal_tui.metrics.document_base import Metric
from copal_tui.metrics.document_copal import Corpus, PatternMixRow
from copal_tui.metrics.rates import FACET_ORDER, METHOD_ORDER, PATTERN_ORDER, ordered

ORDERS = {
    "clauses_by_effect": [e.value for e in Effect],
    "compositions_by_pattern": PATTERN_ORDER,
    "items_by_pattern": PATTERN_ORDER,
    "items_by_facet": FACET_ORDER,
    "items_by_method": METHOD_ORDER,
}


def _breakdown(rows: Sequence[tuple[Any, int]], order: Sequence[str]) -> dict[str, int]:
    counts = {str(k): int(v) for k, v in rows}
    if order:
        return {k: counts[k] for k in ordered(counts, order)}
    # Numeric keys (number of active clauses) sort as numbers, the rest as text.
    return dict(sorted(counts.items(), key=lambda kv: (not kv[0].isdigit(),
                                                       int(kv[0]) if kv[0].isdigit() else 0,
                                                       kv[0])))


def pattern_mix(items_by_pattern: dict[str, int], composed_items: int) -> list[PatternMixRow]:
    """Per pattern: selected composed items and their share of all of them, beside the paper's
    count and share (its shares are over its 900 selected composed queries)."""
    paper_total = sum(PAPER_PATTERN_COUNTS.values())
    rows = []
    for pattern in PATTERN_ORDER:
        selected = int(items_by_pattern.get(pattern, 0))
        share = ratio(selected, composed_items, "no selected composed items")
        paper = PAPER_PATTERN_COUNTS[pattern]
        rows.append(PatternMixRow(pattern=pattern, selected=selected,
                                  selected_share=Metric.of(*share), paper=paper,
                                  paper_share=paper / paper_total))
    return rows


def corpus_profile(counts: dict[str, list[tuple[Any, ...]]]) -> Corpus:
    """`counts` is the small tables' counts (`CorpusCounts.by_key()` of
    `copal_tui.domain.report_rows`) with the frame's (`frame.corpus_arrays`)."""
    def total(key: str) -> int:
        return sum(int(r[1]) for r in counts[key])

    # Every `*_by_*` field of the profile is the breakdown of the counts of its name.
    breakdowns = {key: _breakdown(counts[key], ORDERS.get(key, []))
                  for key in Corpus.model_fields if "_by_" in key}
    composed_items = total("items_by_pattern")
    return Corpus(
        worlds=len(counts["worlds"]), world_ids=[row[0] for row in counts["worlds"]],
        policies=total("policies_by_kind"), clauses=total("clauses_by_effect"),
        compositions=total("compositions_by_pattern"), composed_items=composed_items,
        projections=int(counts["projections"][0][1]) if counts["projections"] else 0,
        responses=total("responses_by_model"), judgments=total("judgments_by_setting"),
        **breakdowns, pattern_mix=pattern_mix(breakdowns["items_by_pattern"], composed_items))
