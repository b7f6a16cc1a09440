"""The COMPASS suite's tab on the world screen (its descriptor's `world_tab`): the world's COMPASS
queries by type, strategy, form, intended policy and verification status. Enter opens a query's
screen; `r` on a base query lists the edge queries built from it, on an edge query its
siblings."""

from __future__ import annotations

from typing import Any

from copal_tui.services import browse
from copal_tui.tui.widgets.table_columns import Column, fmt_rate, short_id
from copal_tui.tui.widgets.world_tab import WorldTab


def _columns(world_id: str) -> list[Column]:
    return [
        Column("id", "id", 12, render=lambda r: short_id(r["id"], world_id, 12)),
        Column("query_type", "type", 12),
        Column("strategy", "strategy", 14, hide_below=100,
               render=lambda r: (r["strategy"] or "-").replace("_", " ")),
        Column("form", "form", 5, hide_below=120, render=lambda r: r["form"] or "-"),
        Column("policy_id", "policy", 8),
        Column("status", "status", 8),
        Column("responses", "resp", 4, hide_below=100, justify="right"),
        Column("judge_aligned", "al. J", 5, hide_below=110, justify="right",
               render=lambda r: fmt_rate(r["judge_aligned"])),
        Column("text", "query"),
    ]


def _related(row: dict[str, Any], world_id: str) -> str:
    # A base query -> its edge queries; an edge query -> its siblings.
    return f"parent:{short_id(row.get('parent_id') or row['id'], world_id, 200)}"


TAB = WorldTab(
    title="COMPASS", columns=_columns,
    hint="/ filter: words, or type:denied_edge strategy:hypo form:long status:kept policy:D1",
    page=browse.compass_queries_page,
    count=lambda summary: summary.compass_queries, counted="COMPASS queries",
    opens="compass_query", opens_with="query_id", related=_related)
