"""Paired contrast: single-policy (projection) error vs composed error, per target model.

Only composed items whose own response and every projection's response were judged count
(DESIGN section 2: a composition-induced failure is a composed item that fails while all of its
projections pass). Items without projections or with unjudged projections are counted as
exclusions, not silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from copal_tui.metrics.classify import put, ratio
from copal_tui.metrics.intervals import wilson


def paired_contrast(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """`rows` are `store.metrics_sql.paired_contrast` tuples, one per model."""
    out = []
    for model, no_proj, incomplete, n, comp_err, n_proj, proj_err, induced, any_proj in rows:
        n, comp_err, n_proj, proj_err = int(n or 0), int(comp_err or 0), int(n_proj or 0), \
            int(proj_err or 0)
        induced, any_proj = int(induced or 0), int(any_proj or 0)
        entry: dict[str, Any] = {"model": model, "n": n, "n_projections": n_proj,
                                 "composed_errors": comp_err, "projection_errors": proj_err,
                                 "composition_induced": induced}
        reason = "no composed item with all of its projections answered and judged"
        put(entry, "single_error_rate",
            ratio(proj_err, n_proj, "no judged projections on paired items"))
        put(entry, "composed_error_rate", ratio(comp_err, n, reason))
        put(entry, "composition_induced_rate", ratio(induced, n, reason))
        # The item-level view: the share of paired items where some projection fails.
        put(entry, "any_projection_error_rate", ratio(any_proj, n, reason))
        low, high = wilson(induced, n)
        entry["composition_induced_ci_low"], entry["composition_induced_ci_high"] = low, high
        if n == 0:
            entry["composition_induced_ci_low_reason"] = reason
            entry["composition_induced_ci_high_reason"] = reason
        entry["excluded_no_projections"] = int(no_proj or 0)
        entry["excluded_incomplete_projections"] = int(incomplete or 0)
        out.append(entry)
    return out
