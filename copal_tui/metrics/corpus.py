"""Corpus profile: what the numbers are computed over (worlds, policies, clauses, compositions,
items by pattern, facet, active clauses and construction method, responses, judgments), and the
selected suite's relation-pattern mix beside the paper's (Table 8: 364, 179, 175 and 182 of its
900 selected composed queries), in the report's pattern order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from copal_tui.domain.selection import PAPER_PATTERN_COUNTS
from copal_tui.metrics.classify import put, ratio
from copal_tui.metrics.rates import FACET_ORDER, METHOD_ORDER, PATTERN_ORDER, ordered

EFFECT_ORDER = ["PERMIT", "PROHIBIT", "REQUIRE_GATE", "DISCLOSE", "WITHHOLD", "ROUTE"]
ORDERS = {
    "clauses_by_effect": EFFECT_ORDER,
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


def pattern_mix(items_by_pattern: dict[str, int], composed_items: int) -> list[dict[str, Any]]:
    """Per pattern: selected composed items and their share of all of them, beside the paper's
    count and share (its shares are over its 900 selected composed queries)."""
    paper_total = sum(PAPER_PATTERN_COUNTS.values())
    rows = []
    for pattern in PATTERN_ORDER:
        row: dict[str, Any] = {"pattern": pattern,
                               "selected": int(items_by_pattern.get(pattern, 0))}
        put(row, "selected_share", ratio(row["selected"], composed_items,
                                         "no selected composed items"))
        row["paper"] = PAPER_PATTERN_COUNTS[pattern]
        row["paper_share"] = PAPER_PATTERN_COUNTS[pattern] / paper_total
        rows.append(row)
    return rows


def corpus_profile(counts: dict[str, list[tuple[Any, ...]]]) -> dict[str, Any]:
    """`counts` is `store.report.metrics_sql.corpus_counts`; totals come first, then breakdowns."""
    out: dict[str, Any] = {
        "worlds": len(counts["worlds"]),
        "world_ids": [row[0] for row in counts["worlds"]],
        "policies": sum(int(r[1]) for r in counts["policies_by_kind"]),
        "clauses": sum(int(r[1]) for r in counts["clauses_by_effect"]),
        "compositions": sum(int(r[1]) for r in counts["compositions_by_pattern"]),
        "composed_items": sum(int(r[1]) for r in counts["items_by_pattern"]),
        "projections": int(counts["projections"][0][1]) if counts["projections"] else 0,
        "responses": sum(int(r[1]) for r in counts["responses_by_model"]),
        "judgments": sum(int(r[1]) for r in counts["judgments_by_setting"]),
    }
    for key in ("policies_by_kind", "clauses_by_effect", "compositions_by_pattern",
                "compositions_by_status", "items_by_pattern", "items_by_facet",
                "items_by_active_clauses", "items_by_method", "responses_by_model",
                "judgments_by_setting"):
        out[key] = _breakdown(counts[key], ORDERS.get(key, []))
    out["pattern_mix"] = pattern_mix(out["items_by_pattern"], out["composed_items"])
    return out
